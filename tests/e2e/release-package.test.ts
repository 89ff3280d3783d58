// The release people download: `npm run release`'s tarball (npm pack, package.json "files")
// installed with `npm install -g` into an empty prefix, away from the checkout, runs
// `steadfast --version`, `validate` and `envoy-config --mode attach` from there: what a user
// without a clone or build tools gets.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

describe('the release tarball, installed into an empty prefix', () => {
  let dir: string;
  let tarball: string;
  let installed: string;
  const steadfast = (args: readonly string[]) =>
    spawnSync(join(dir, 'prefix', 'bin', 'steadfast'), args, { cwd: dir, encoding: 'utf8' });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-release-'));
    const said = execFileSync(process.execPath, ['scripts/release.mjs'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    tarball = join(REPO_ROOT, 'release', `steadfast-${VERSION}.tgz`);
    expect(said).toContain(tarball);
    // Its dependencies come from the registry, or npm's cache when it has them.
    execFileSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        join(dir, 'prefix'),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        tarball,
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    installed = join(dir, 'prefix', 'lib', 'node_modules', 'steadfast');
  }, 180_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the built CLI, both builds of the filter, the protos and the docs; no sources or tests', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const f of [
      'package/bin/steadfast.js',
      'package/dist/extproc/src/cli/main.js',
      'package/filter/build/steadfast.wasm',
      'package/filter/build/libsteadfast.so',
      'package/filter/build/native.json',
      'package/extproc/proto/steadfast/dynamic-modules.proto',
      'package/README.md',
      'package/docs/attach.md',
      'package/deploy/helm/steadfast/Chart.yaml',
      'package/deploy/kubernetes/install.yaml',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /\.ts$|\.map$|^package\/tests\/|^package\/dist\/bench\//.test(f))).toEqual([]);
  });

  it('runs steadfast --version, validate and envoy-config --mode attach from the install', () => {
    const version = steadfast(['--version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(`steadfast ${VERSION}`);

    // The examples come with the package: the user's copy of them, outside any checkout.
    cpSync(join(installed, 'examples', 'quickstart'), join(dir, 'config'), { recursive: true });
    const validate = steadfast(['validate', 'config']);
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/all accepted and resolved/);

    const attach = steadfast(['envoy-config', '--mode', 'attach', '--config', 'config']);
    expect(attach.status, attach.stderr).toBe(0);
    expect(attach.stdout).toMatch(/envoy\.filters\.http\.ext_proc/);
    // The filter it names is the one the package installed.
    expect(attach.stdout).toContain('prefix/lib/node_modules/steadfast/filter/build/steadfast.wasm');
  });
});
