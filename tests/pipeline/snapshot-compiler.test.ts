// What crosses from the configuration thread: a snapshot rebuilt from CompiledData equals
// the one compiled in place, resolver included; statuses are parsed only when read. The
// table crosses route by route, and a route the reader holds crosses as its position: the
// reader keeps it as the same object. The table's digest is the one-shot path's.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  CompiledReader,
  CompiledWriter,
  compiledData,
  packedCompiledData,
  snapshotFrom,
} from '../../extproc/src/pipeline/snapshot-compiler.js';
import { PieceReader, PieceWriter, TextPack, packedBuffers } from '../../extproc/src/pipeline/piece-list.js';
import { compileSnapshot, fingerprintOf, statusesDigest } from '../../extproc/src/pipeline/snapshot.js';
import { tableGeneration } from '../../extproc/src/resolve/answer-scope.js';
import { jsonDigest, policyTableDigest } from '../../extproc/src/policy/table-digest.js';
import { baseObjectsYaml, manyRoutes, routesYaml } from '../e2e/support/attach-config.js';

describe('snapshotFrom', () => {
  const files = [
    { path: 'base.yaml', text: baseObjectsYaml([{ address: '127.0.0.2' }], 8080) },
    { path: 'routes.yaml', text: routesYaml(manyRoutes(20)) },
  ];
  const direct = compileSnapshot(files);
  const data = compiledData(direct, new CompiledWriter(), 1);
  const editedFiles = (path: string) => [
    files[0] as (typeof files)[number],
    { path: 'routes.yaml', text: routesYaml(manyRoutes(20)).replace("'/r/7'", `'${path}'`) },
  ];

  it("digests the table as the one-shot path does, and every route's change and place changes it", () => {
    const digest = policyTableDigest(direct.table);
    expect(data.generation).toBe(tableGeneration(digest));
    expect(data.fingerprint).toBe(direct.fingerprint);
    expect(data.fingerprint).toBe(
      fingerprintOf(
        digest,
        direct.tls,
        statusesDigest(direct.statuses.map((s) => jsonDigest(JSON.stringify(s)))),
        direct.diagnostics,
      ),
    );
    expect(direct.resolver.generation).toBe(data.generation);
    expect(snapshotFrom(data).resolver.scope('svc-1.example')).toContain(`g=${data.generation}`);
    const edited = compileSnapshot(editedFiles('/edited/7')).table;
    expect(policyTableDigest(edited)).not.toBe(digest);
    const swapped = [...direct.table.routes];
    [swapped[3], swapped[4]] = [
      swapped[4] as (typeof swapped)[number],
      swapped[3] as (typeof swapped)[number],
    ];
    expect(policyTableDigest({ ...direct.table, routes: swapped })).not.toBe(digest);
    expect(policyTableDigest({ ...direct.table, listeners: [] })).not.toBe(digest);
  });

  it('sends the routes the reader holds as their positions, and the reader keeps them as the same objects', () => {
    const writer = new CompiledWriter();
    const reader = new CompiledReader();
    const first = snapshotFrom(compiledData(direct, writer, 1, reader.held), reader);
    expect(reader.held).toBe(1);
    const edited = compileSnapshot(editedFiles('/edited/7'));
    const data2 = compiledData(edited, writer, 2, reader.held);
    // Only route-7 crosses as text; the others are positions in table 1.
    expect(data2.table.routes.base).toBe(1);
    const texts = data2.table.routes.items.filter((r): r is string => typeof r === 'string');
    expect(texts.map((t) => (JSON.parse(t) as { name: string }).name)).toEqual(['route-7']);
    const second = snapshotFrom(data2, reader);
    expect(second.table).toEqual(edited.table);
    const changed = second.table.routes.filter((r, i) => r !== first.table.routes[i]).map((r) => r.name);
    expect(changed).toEqual(['route-7']);
    // Back to the first table: route-7 as it was crosses as text again, a new object.
    const third = snapshotFrom(compiledData(direct, writer, 3, reader.held), reader);
    const named = (s: { table: typeof direct.table }, name: string) =>
      s.table.routes.find((r) => r.name === name);
    expect(named(third, 'route-7')).toBeDefined();
    expect(named(third, 'route-7')).not.toBe(named(first, 'route-7'));
    expect(named(third, 'route-8')).toBe(named(first, 'route-8'));
    expect(third.table).toEqual(direct.table);
  });

  it('sends every route as text to a reader that does not hold the last table, and a reader refuses a base it lacks', () => {
    const writer = new CompiledWriter();
    const reader = new CompiledReader();
    snapshotFrom(compiledData(direct, writer, 1, reader.held), reader);
    // Table 2 never reached the reader (its compile failed on the service's side).
    compiledData(direct, writer, 2, reader.held);
    const data3 = compiledData(direct, writer, 3, reader.held);
    expect(data3.table.routes.base).toBeUndefined();
    expect(data3.table.routes.items.every((r) => typeof r === 'string')).toBe(true);
    expect(snapshotFrom(data3, reader).table).toEqual(direct.table);
    // A table that refers to one the reader does not hold is refused, and the reader keeps its own.
    const stranger = new CompiledReader();
    const data4 = compiledData(direct, writer, 4, 3);
    expect(data4.table.routes.base).toBe(3);
    expect(() => snapshotFrom(data4, stranger)).toThrow(/refers to policy table 3, which is not held/);
    expect(stranger.held).toBeUndefined();
    expect(snapshotFrom(data4, reader).table).toEqual(direct.table);
  });

  it('rebuilds the same table, statuses and diagnostics', () => {
    const rebuilt = snapshotFrom(data);
    expect(rebuilt.table).toEqual(direct.table);
    expect(rebuilt.statuses).toEqual(direct.statuses);
    expect(rebuilt.statuses).toBe(rebuilt.statuses);
    expect(rebuilt.diagnostics).toEqual(direct.diagnostics);
  });

  it("parses only the statuses whose text changed: the others are the last generation's objects", () => {
    const writer = new CompiledWriter();
    const reader = new CompiledReader();
    const first = snapshotFrom(compiledData(direct, writer, 1, reader.held), reader).statuses;
    // route-7 names a Service that does not exist: its status (and only its) changes.
    const missing = routesYaml(manyRoutes(20)).replace(
      "value: '/r/7' } }]\n      backendRefs: [{ name: app,",
      "value: '/r/7' } }]\n      backendRefs: [{ name: missing,",
    );
    const edited = compileSnapshot([
      files[0] as (typeof files)[number],
      { path: 'routes.yaml', text: missing },
    ]);
    const second = snapshotFrom(compiledData(edited, writer, 2, reader.held), reader).statuses;
    expect(second).toEqual(edited.statuses);
    const renewed = second.filter((s, i) => s !== first[i]).map((s) => `${s.kind}/${s.metadata.name}`);
    expect(renewed).toEqual(['HTTPRoute/route-7']);
    expect(edited.statuses.filter((s, i) => !isDeepStrictEqual(s, direct.statuses[i]))).toHaveLength(1);
  });

  it('crosses packed: the texts move in buffers, and the reader makes the same snapshot and keeps what it holds', () => {
    const writer = new CompiledWriter();
    const reader = new CompiledReader();
    const cross = (id: number, snapshot = direct) => {
      const { packed, transfer } = packedCompiledData(snapshot, writer, id, reader.held);
      const crossed = structuredClone(packed, { transfer });
      // Moved, not copied: the sender's buffers are detached.
      expect(transfer.every((b) => b.byteLength === 0)).toBe(true);
      return { crossed, snapshot: snapshotFrom(crossed, reader) };
    };
    const first = cross(1).snapshot;
    expect(first.table).toEqual(direct.table);
    expect(first.statuses).toEqual(direct.statuses);
    const edited = compileSnapshot(editedFiles('/edited/7'));
    const second = cross(2, edited);
    // Only route-7 crosses as text; the others are positions in table 1, kept as the same objects.
    expect([...second.crossed.table.routes.items].filter((p) => p < 0)).toHaveLength(1);
    expect(second.snapshot.table).toEqual(edited.table);
    expect(second.snapshot.statuses).toEqual(edited.statuses);
    const changed = second.snapshot.table.routes.filter((r, i) => r !== first.table.routes[i]);
    expect(changed.map((r) => r.name)).toEqual(['route-7']);
  });

  it('packs texts of any characters across chunks, and reads them back with the positions', () => {
    const texts = ['"plain"', '"é, €, 😀 and \\u0000"', `"${'x'.repeat(1.5 * 2 ** 20)}"`, '{"k":"ü"}'];
    const items = texts.map((t) => ({ t }));
    const writer = new PieceWriter<{ t: string }>();
    const reader = new PieceReader<string>('list');
    const read = (list: readonly { t: string }[], id: number, held?: number) => {
      const pack = new TextPack();
      return reader.read(pack.packed(writer.write(list, id, held, pack).list), id, (text) => text);
    };
    expect(read(items, 1)).toEqual(items.map((x) => JSON.stringify(x)));
    const next = [items[3], { t: 'new' }, items[0], items[2]] as { t: string }[];
    expect(read(next, 2, 1)).toEqual(next.map((x) => JSON.stringify(x)));
    expect(read([], 3, 2)).toEqual([]);
  });

  it('moves no more than the bytes written: the last chunk is as long as its texts', () => {
    const pack = new TextPack();
    const list = new PieceWriter<{ t: string }>().write([{ t: 'one route' }], 1, undefined, pack).list;
    const packed = pack.packed(list);
    const moved = packedBuffers(packed).slice(3);
    expect(moved.map((b) => b.byteLength)).toEqual([Buffer.byteLength('{"t":"one route"}')]);
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
