// Every Node version package.json's `engines` allows installs the locked packages without an
// EBADENGINE warning: each locked package's own `engines.node` covers the whole range.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

// npm's own range logic (semver is in the tree through the dev tools).
const semver = createRequire(import.meta.url)('semver') as {
  subset(range: string, superset: string): boolean;
};

interface LockedPackage {
  version?: string;
  engines?: { node?: string };
}

describe('Node engines', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
  };
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockedPackage>;
  };

  it("every locked package accepts every Node version the project's engines allow", () => {
    const allowed = pkg.engines.node;
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines?.node !== undefined)
      .filter(([, p]) => !semver.subset(allowed, p.engines?.node as string))
      .map(([path, p]) => `${path}@${p.version} wants node ${p.engines?.node}`);
    expect(refusing).toEqual([]);
  });

  it('allows the Node the Docker image runs', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const major = /^FROM node:(\d+)-/m.exec(dockerfile)?.[1];
    expect(major).toBeDefined();
    expect(
      semver.subset(`^${major}.19.0`, pkg.engines.node) || semver.subset(`>=${major}`, pkg.engines.node),
    ).toBe(true);
  });
});
