// What crosses from the configuration thread: a snapshot rebuilt from CompiledData equals
// the one compiled in place, resolver included; statuses are parsed only when read.
import { describe, expect, it } from 'vitest';
import { type CompiledData, snapshotFrom } from '../../extproc/src/pipeline/snapshot-compiler.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { baseObjectsYaml, manyRoutes, routesYaml } from '../e2e/support/attach-config.js';

describe('snapshotFrom', () => {
  const files = [
    { path: 'base.yaml', text: baseObjectsYaml([{ address: '127.0.0.2' }], 8080) },
    { path: 'routes.yaml', text: routesYaml(manyRoutes(20)) },
  ];
  const direct = compileSnapshot(files);
  const data: CompiledData = {
    tableJson: JSON.stringify(direct.table),
    statusesJson: JSON.stringify(direct.statuses),
    tls: direct.tls,
    diagnostics: direct.diagnostics,
    errors: direct.errors,
    warnings: direct.warnings,
  };

  it('rebuilds the same table, statuses and diagnostics', () => {
    const rebuilt = snapshotFrom(data);
    expect(rebuilt.table).toEqual(direct.table);
    expect(rebuilt.statuses).toEqual(direct.statuses);
    expect(rebuilt.statuses).toBe(rebuilt.statuses);
    expect(rebuilt.diagnostics).toEqual(direct.diagnostics);
  });

  it('resolves like the resolver compiled in place', () => {
    const rebuilt = snapshotFrom(data);
    for (const i of [0, 7, 19]) {
      const req = { method: 'GET', authority: `svc-${i}.example`, path: `/r/${i}/x` };
      expect(rebuilt.resolver.resolve(req)?.token).toBe(direct.resolver.resolve(req)?.token);
    }
    expect(rebuilt.resolver.size).toBe(direct.resolver.size);
  });
});
