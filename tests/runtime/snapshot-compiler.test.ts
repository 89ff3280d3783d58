// What crosses from the configuration thread: a snapshot rebuilt from CompiledData equals
// the one compiled in place, resolver included; statuses are parsed only when read. The
// table crosses route by route: joined, it is JSON.stringify's text, and a reader keeps
// the routes whose text did not change as the same objects.
import { describe, expect, it } from 'vitest';
import { compiledData, snapshotFrom } from '../../extproc/src/pipeline/snapshot-compiler.js';
import { compileSnapshot, fingerprintOf } from '../../extproc/src/pipeline/snapshot.js';
import { TableReader, joinTableJson, tableJsonOf } from '../../extproc/src/pipeline/table-json.js';
import { tableGeneration } from '../../extproc/src/resolve/answer-scope.js';
import { baseObjectsYaml, manyRoutes, routesYaml } from '../e2e/support/attach-config.js';

describe('snapshotFrom', () => {
  const files = [
    { path: 'base.yaml', text: baseObjectsYaml([{ address: '127.0.0.2' }], 8080) },
    { path: 'routes.yaml', text: routesYaml(manyRoutes(20)) },
  ];
  const direct = compileSnapshot(files);
  const data = compiledData(direct);

  it("joins the routes' JSON into the table's, byte for byte, and digests it as before", () => {
    const tableJson = JSON.stringify(direct.table);
    expect(joinTableJson(tableJsonOf(direct.table))).toBe(tableJson);
    expect(joinTableJson(tableJsonOf({ ...direct.table, routes: [] }))).toBe(
      JSON.stringify({ ...direct.table, routes: [] }),
    );
    expect(data.generation).toBe(tableGeneration(tableJson));
    expect(data.fingerprint).toBe(direct.fingerprint);
    expect(data.fingerprint).toBe(
      fingerprintOf(tableJson, direct.tls, JSON.stringify(direct.statuses), direct.diagnostics),
    );
  });

  it('keeps the objects of the routes whose JSON is the same, and parses the rest', () => {
    const reader = new TableReader();
    const first = snapshotFrom(data, reader);
    const edited = compileSnapshot([
      files[0] as (typeof files)[number],
      { path: 'routes.yaml', text: routesYaml(manyRoutes(20)).replace("'/r/7'", "'/edited/7'") },
    ]);
    const second = snapshotFrom(compiledData(edited), reader);
    expect(second.table).toEqual(edited.table);
    const changed = second.table.routes.filter((r, i) => r !== first.table.routes[i]).map((r) => r.name);
    expect(changed).toEqual(['route-7']);
    // A reader holds the last table only: the route as it was before is parsed anew.
    const third = snapshotFrom(data, reader);
    const named = (s: { table: typeof direct.table }, name: string) =>
      s.table.routes.find((r) => r.name === name);
    expect(named(third, 'route-7')).toBeDefined();
    expect(named(third, 'route-7')).not.toBe(named(first, 'route-7'));
    expect(named(third, 'route-8')).toBe(named(first, 'route-8'));
    expect(third.table).toEqual(direct.table);
  });

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
