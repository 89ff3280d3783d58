// What Envoy would refuse shows where a user looks: a match RE2 cannot compile is a
// PartiallyInvalid condition on its route in `steadfast validate`, which then fails.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandIO } from '../../extproc/src/cli/command.js';
import { run } from '../../extproc/src/cli/main.js';
import { REPO_ROOT } from '../support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-cli-re2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(): CommandIO & { stdout: () => string } {
  let out = '';
  return { out: (t) => (out += `${t}\n`), err: () => undefined, stdout: () => out };
}

describe('validate: matches Envoy cannot take', () => {
  const file = join(dir, 'rx.yaml');
  writeFileSync(file, readFileSync(join(REPO_ROOT, 'tests/translate/testdata/regex-re2.in.yaml'), 'utf8'));

  it('shows PartiallyInvalid on the route, naming each dropped match, and exits 1', async () => {
    const io = capture();
    expect(await run(['validate', file], io)).toBe(1);
    const text = io.stdout();
    expect(text).toMatch(/^FAIL HTTPRoute default\/rx/m);
    expect(text).toContain('Accepted=True (Accepted)');
    expect(text).toMatch(
      /PartiallyInvalid=True \(UnsupportedValue\): Dropped Rule matches from Envoy's routes/,
    );
    expect(text).toContain('httproute/default/rx/rule/0/match/0: regular expression "/a(?=b).*" uses "(?="');
    expect(text).toContain('httproute/default/rx/rule/0/match/2');
    expect(text).not.toContain('httproute/default/rx/rule/0/match/1');
  });
});
