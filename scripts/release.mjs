#!/usr/bin/env node
// `npm run release`: the tarball people download and install with
// `npm install -g ./steadfast-VERSION.tgz` — the built CLI, both builds of the filter, the
// protos, the examples, the Envoy setups, the chart and the docs (package.json "files").
// Refuses to pack a checkout whose build is missing a part, naming it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'release');
const needed = [
  ['dist/extproc/src/cli/main.js', 'npm run build:ts'],
  ['filter/build/steadfast.wasm', 'npm run build:wasm'],
  ['filter/build/libsteadfast.so', 'npm run build:native (needs wabt: docs/native-filter.md)'],
  ['filter/build/native.json', 'npm run build:native'],
];
const missing = needed.filter(([file]) => !existsSync(join(root, file)));
if (missing.length > 0) {
  for (const [file, how] of missing) process.stderr.write(`release: ${file} is missing: ${how}\n`);
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const [packed] = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: root, encoding: 'utf8' }),
);
process.stdout.write(
  `release: ${join(out, packed.filename)} (${packed.entryCount} files, ${Math.round(packed.size / 1024)} KiB); ` +
    `install with npm install -g ${join('release', packed.filename)}\n`,
);
