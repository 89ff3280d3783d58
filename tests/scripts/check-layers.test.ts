// The layer and cycle check `npm run lint` runs: passes on the tree as it is, and fails,
// naming the file, on an import against the layers and on an import cycle.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const SCRIPT = join(REPO_ROOT, 'scripts', 'check-layers.mjs');

function check(root?: string) {
  const r = spawnSync(process.execPath, [SCRIPT], {
    encoding: 'utf8',
    env: { ...process.env, ...(root ? { CHECK_LAYERS_ROOT: root } : {}) },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

let copy = '';
afterEach(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
  copy = '';
});

/** A copy of the two checked trees, to plant a problem in. */
function copyTrees(): string {
  copy = mkdtempSync(join(tmpdir(), 'steadfast-layers-'));
  for (const tree of ['extproc/src', 'filter/assembly']) {
    cpSync(join(REPO_ROOT, tree), join(copy, tree), { recursive: true });
  }
  return copy;
}

describe('check-layers', () => {
  it('passes on the tree as it is', () => {
    const r = check();
    expect(r.output).toContain('no import cycles');
    expect(r.status).toBe(0);
  });

  it('fails on an import against the layers', () => {
    const root = copyTrees();
    writeFileSync(
      join(root, 'extproc/src/policy/uses-translate.ts'),
      "import { translate } from '../translate/translate.js';\nexport const t = translate;\n",
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      'extproc/src/policy/uses-translate.ts imports translate/translate.ts: policy may not import translate',
    );
  });

  it('fails when a stage below the CLI picks a concrete provider', () => {
    const root = copyTrees();
    writeFileSync(
      join(root, 'extproc/src/server/reads-files.ts'),
      "import { FileProvider } from '../provider/file.js';\nexport const p = FileProvider;\n",
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      'extproc/src/server/reads-files.ts imports provider/file.ts: server may not import provider/file.ts',
    );
  });

  it('fails when a consumer of the IR builds it', () => {
    const root = copyTrees();
    writeFileSync(
      join(root, 'extproc/src/envoy/builds-ir.ts'),
      "import { buildIr } from '../ir/build-ir.js';\nexport const b = buildIr;\n",
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      'extproc/src/envoy/builds-ir.ts imports ir/build-ir.ts: envoy may not import ir/build-ir.ts',
    );
  });

  it('fails on an import cycle, even inside one layer', () => {
    const root = copyTrees();
    writeFileSync(
      join(root, 'extproc/src/resolve/a.ts'),
      "import { b } from './b.js';\nexport const a = b;\n",
    );
    writeFileSync(
      join(root, 'extproc/src/resolve/b.ts'),
      "import type { a } from './a.js';\nexport const b = 1 as typeof a;\n",
    );
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.output).toContain('extproc/src: import cycle between resolve/a.ts, resolve/b.ts');
  });
});
