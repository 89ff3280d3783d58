import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // tests/compose needs a Docker engine: `npm run test:compose` runs it (vitest.compose.config.ts).
    exclude: [...configDefaults.exclude, 'tests/compose/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end suites start real Envoys on fixed loopback addresses; run files one at a time.
    fileParallelism: false,
    reporters: ['default'],
  },
});
