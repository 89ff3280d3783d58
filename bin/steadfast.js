#!/usr/bin/env node
// The installed entry point: runs the compiled CLI (`npm run build` produces dist/).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'extproc', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write('steadfast: not built yet; run `npm run build` first\n');
  process.exit(2);
}
const { run } = await import(main);
process.exitCode = await run(process.argv.slice(2));
