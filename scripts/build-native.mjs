#!/usr/bin/env node
// Builds the filter's second form: filter/build/steadfast.wasm → C (wasm2c, Debian's wabt)
// → an Envoy dynamic module, filter/build/libsteadfast.so, with the host layer in
// filter/native/. One AssemblyScript source, two builds. Writes filter/build/native.json:
// the Envoy version and dynamic-module ABI the module is built for, and the digest of the
// wasm it came from, which `steadfast` reads to decide whether the Envoy it runs can load it.
//
// A machine without wasm2c or a C compiler still builds and runs the wasm filter: this says
// so once, removes any stale module, and exits 0. STEADFAST_REQUIRE_NATIVE=1 (CI) makes a
// missing tool an error instead.
//
// `--wasm FILE --out FILE` builds another wasm of the filter (a test-only build) the same way,
// without a manifest.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pins = JSON.parse(readFileSync(join(root, 'tools.json'), 'utf8'));
function argument(name) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

const build = join(root, 'filter', 'build');
const hostDir = join(root, 'filter', 'native');
const wasm = argument('--wasm') ?? join(build, 'steadfast.wasm');
const output = argument('--out') ?? join(build, 'libsteadfast.so');
const generated = join(dirname(output), 'native');
const manifest = argument('--out') === undefined ? join(build, 'native.json') : null;

function say(msg) {
  process.stdout.write(`steadfast native: ${msg}\n`);
}

function tool(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : null;
}

function unavailable(why) {
  rmSync(output, { force: true });
  if (manifest) rmSync(manifest, { force: true });
  const msg = `${why}; building the wasm filter only (Envoy runs it in its wasm VM). \`npm run tools\` installs wabt on Debian.`;
  if (process.env.STEADFAST_REQUIRE_NATIVE === '1') {
    process.stderr.write(`steadfast native: ${msg}\n`);
    process.exit(1);
  }
  say(msg);
  process.exit(0);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`steadfast native: ${cmd} ${args.join(' ')} failed\n${r.stdout}${r.stderr}\n`);
    process.exit(1);
  }
}

if (!existsSync(wasm)) {
  process.stderr.write(`steadfast native: ${wasm} is missing: run \`npm run build:wasm\` first\n`);
  process.exit(1);
}
const wabt = tool('wasm2c', ['--version']);
if (wabt === null) unavailable('wasm2c was not found');
if (wabt !== pins.wabt) unavailable(`wasm2c ${wabt} is not the pinned ${pins.wabt}`);
const cc = process.env.CC ?? 'gcc';
if (tool(cc, ['--version']) === null) unavailable(`no C compiler (${cc})`);
// wasm-rt.h comes with wasm2c (Debian puts it in /usr/include).
const includeDirs = ['/usr/include', '/usr/src/wasm2c'].filter((d) => existsSync(join(d, 'wasm-rt.h')));
if (includeDirs.length === 0) unavailable('wasm-rt.h (from wabt) was not found');

mkdirSync(generated, { recursive: true });
run('wasm2c', [wasm, '-n', 'steadfast', '-o', join(generated, 'steadfast.c')]);
run(cc, [
  '-O2',
  '-fPIC',
  '-shared',
  '-DNDEBUG',
  '-fvisibility=hidden',
  '-fno-strict-aliasing',
  '-Wall',
  '-Wno-unused-function',
  '-Wno-unused-variable',
  '-Wno-unused-but-set-variable',
  // The runtime's settings and the thread-local call depth, ahead of wasm-rt.h everywhere.
  '-include',
  join(hostDir, 'wasm-runtime.h'),
  `-I${hostDir}`,
  `-I${generated}`,
  ...includeDirs.map((d) => `-I${d}`),
  join(hostDir, 'wasm-runtime.c'),
  join(hostDir, 'host.c'),
  join(generated, 'steadfast.c'),
  '-o',
  output,
  '-lpthread',
]);
if (manifest) {
  const digest = createHash('sha256').update(readFileSync(wasm)).digest('hex');
  writeFileSync(
    manifest,
    `${JSON.stringify({ envoy: pins.envoy, abi: pins.dynamicModuleAbi, wabt, wasmSha256: digest }, null, 2)}\n`,
  );
}
say(`built ${output} for Envoy ${pins.envoy} (dynamic module ABI ${pins.dynamicModuleAbi})`);
