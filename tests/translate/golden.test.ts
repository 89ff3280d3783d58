// Golden tests: every testdata/*.in.yaml is compiled (parse → validate → translate) and its
// diagnostics, status and PolicyTable compared with *.out.yaml. UPDATE_GOLDEN=1 rewrites the
// outputs and deletes stale ones; without it a stale output fails the run.
import { existsSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatDiagnostic } from '../../extproc/src/gatewayapi/diagnostic.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const update = process.env.UPDATE_GOLDEN === '1';
const inputs = readdirSync(dir)
  .filter((f) => f.endsWith('.in.yaml'))
  .sort();

export function render(name: string, text: string): string {
  const snap = compileSnapshot([{ path: name, text }]);
  const out = {
    errors: snap.errors.map(formatDiagnostic),
    status: snap.statuses,
    table: snap.table,
  };
  return stringify(JSON.parse(JSON.stringify(out)), { lineWidth: 0 });
}

describe('golden: testdata/*.in.yaml → *.out.yaml', () => {
  it('has inputs', () => {
    expect(inputs.length).toBeGreaterThan(0);
  });

  it('has no stale outputs', () => {
    const stale = readdirSync(dir)
      .filter((f) => f.endsWith('.out.yaml'))
      .filter((f) => !inputs.includes(f.replace(/\.out\.yaml$/, '.in.yaml')));
    if (update) for (const f of stale) unlinkSync(join(dir, f));
    else expect(stale, 'outputs without an input (run with UPDATE_GOLDEN=1 to delete)').toEqual([]);
  });

  for (const input of inputs) {
    it(input.replace(/\.in\.yaml$/, ''), () => {
      const got = render(input, readFileSync(join(dir, input), 'utf8'));
      const outPath = join(dir, input.replace(/\.in\.yaml$/, '.out.yaml'));
      if (update || !existsSync(outPath)) {
        if (!update) throw new Error(`${outPath} is missing; run with UPDATE_GOLDEN=1`);
        writeFileSync(outPath, got);
        return;
      }
      expect(got).toBe(readFileSync(outPath, 'utf8'));
    });
  }
});
