// The project's root directory, from the source tree or the compiled one in dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function projectRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'tools.json')) && existsSync(join(dir, 'package.json'))) return (root = dir);
    dir = dirname(dir);
  }
  throw new Error(`cannot find the steadfast project root above ${fileURLToPath(import.meta.url)}`);
}
