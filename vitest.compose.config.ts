// `npm run test:compose` (scripts/compose-test.mjs): the compose stack, run for real. Kept out
// of `npm test`, which needs no Docker.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/compose/**/*.test.ts'],
    // The first image build (npm ci, tsc, asc) takes minutes; each check waits for real traffic.
    testTimeout: 120_000,
    hookTimeout: 30 * 60_000,
    fileParallelism: false,
    reporters: ['verbose'],
  },
});
