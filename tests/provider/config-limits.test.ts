// Hostile configuration files: a YAML alias bomb ("billion laughs") and a 50 MB file are
// refused, with an error that names the file (and, for the bomb, the line), through the same
// loader every command uses. Expanding the bomb (387 million strings) would exhaust the heap
// or this file's 30 s timeout, so a pass means it was not expanded; how fast the refusal is
// belongs to no test (wall-clock and heap readings on a shared machine fail with no bug).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../extproc/src/cli/main.js';
import { MAX_CONFIG_FILE_BYTES, readConfigFiles } from '../../extproc/src/provider/config-files.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `steadfast validate <path>`; returns exit code and output. */
async function validate(path: string): Promise<{ code: number; output: string }> {
  let output = '';
  const io = { out: (t: string) => (output += `${t}\n`), err: (t: string) => (output += `${t}\n`) };
  const code = await run(['validate', path], io);
  return { code, output };
}

/** Nine levels of nine aliases each: 9^9 (387 million) strings when expanded. */
function aliasBomb(mergeKeys: boolean): string {
  const lines = ['apiVersion: gateway.networking.k8s.io/v1', 'kind: HTTPRoute', 'metadata: { name: bomb }'];
  lines.push('l0: &l0 [lol]');
  for (let i = 1; i <= 9; i++) {
    const refs = Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ');
    lines.push(
      mergeKeys && i > 1
        ? `l${i}: &l${i} { ${Array.from({ length: 9 }, (_, j) => `k${j}: *l${i - 1}`).join(', ')} }`
        : `l${i}: &l${i} [${refs}]`,
    );
  }
  lines.push('spec: { parentRefs: [{ name: gw }], rules: [*l9] }');
  return `${lines.join('\n')}\n`;
}

describe('hostile configuration files', () => {
  it.each([
    ['sequences', false],
    ['mappings', true],
  ])('a YAML alias bomb (%s) → a located yaml-syntax error, without expanding it', async (_what, merge) => {
    const path = join(dir, `bomb-${String(merge)}.yaml`);
    writeFileSync(path, aliasBomb(merge));
    const r = await validate(path);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/bomb-(true|false)\.yaml:1: .*alias/i);
  });

  it('a 50 MB file is not read: an io-error naming the file and its size', async () => {
    const path = join(dir, 'huge.yaml');
    const doc =
      'apiVersion: v1\nkind: Service\nmetadata: { name: x }\nspec: { ports: [{ port: 80 }] }\n---\n';
    writeFileSync(path, doc.repeat(Math.ceil((50 * 1024 * 1024) / doc.length)));
    const read = await readConfigFiles([path]);
    expect(read.files).toEqual([]);
    expect(read.diagnostics).toMatchObject([{ code: 'io-error', file: 'huge.yaml' }]);
    const r = await validate(path);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/huge\.yaml:0: the file is 50\.0 MiB; files over 16\.0 MiB are not read/);
    expect(MAX_CONFIG_FILE_BYTES).toBe(16 * 1024 * 1024);
  });
});
