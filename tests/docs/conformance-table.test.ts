// docs/gateway-api.md's conformance table is the one scripts/conformance-table.mjs makes from
// the ported tests when every case passes (tests/e2e/gateway-conformance.test.ts shows they
// do): a test or case added, renamed or removed without regenerating the table fails here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TESTS } from '../e2e/conformance/all-tables.js';
import { conformanceTitle } from '../e2e/conformance/conformance-case.js';
import { REPO_ROOT } from '../support/paths.js';

describe('the conformance table of docs/gateway-api.md', () => {
  it('is what the ported tests give when all pass', () => {
    const assertionResults = CONFORMANCE_TESTS.flatMap((t) =>
      t.cases.map(() => ({ ancestorTitles: ['conformance', conformanceTitle(t)], status: 'passed' })),
    );
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-table-'));
    try {
      const results = join(dir, 'results.json');
      writeFileSync(results, JSON.stringify({ testResults: [{ assertionResults }] }));
      const run = spawnSync(
        process.execPath,
        ['scripts/conformance-table.mjs', '--results', results, '--check'],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
