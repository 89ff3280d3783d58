// docs/architecture.md stays true to the tree: every file it names in backticks is one the
// repository holds. A name with a folder must match the end of a tracked path; a bare file name
// must be the name of some tracked file (the page names files within the stage it describes).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const FILE = /^[\w.-]+(?:\/[\w.-]+)*\.(?:ts|mjs|c|h|proto|yaml|json|md)$/;

describe('docs/architecture.md', () => {
  const text = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
  const named = [
    ...new Set([...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!).filter((p) => FILE.test(p))),
  ];
  const tracked = execFileSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n');
  const exists = (name: string): boolean => tracked.some((t) => t === name || t.endsWith(`/${name}`));

  it('names files', () => expect(named.length).toBeGreaterThan(30));

  it.each(named)('names %s, which exists', (name) => {
    expect(exists(name)).toBe(true);
  });
});
