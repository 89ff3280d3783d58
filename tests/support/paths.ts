// Where the built artifacts tests run against live. `npm test` builds them first.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function built(relative: string): string {
  const path = join(REPO_ROOT, relative);
  if (!existsSync(path))
    throw new Error(`${relative} is missing: run \`npm run build\` (npm test does it first)`);
  return path;
}

export const filterWasm = (): string => built('filter/build/steadfast.wasm');
export const filterDebugWasm = (): string => built('filter/build/steadfast.debug.wasm');
export const steadfastBin = (): string => {
  built('dist/extproc/src/cli/main.js');
  return join(REPO_ROOT, 'bin', 'steadfast.js');
};
