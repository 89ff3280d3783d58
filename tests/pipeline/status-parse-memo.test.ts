// The service parses only the statuses that changed: after every step of seeded random edits,
// the statuses as they cross from the compiler thread (CompiledWriter → CompiledReader, as
// snapshotFrom reads them) parse to a fresh parse of every status, an unchanged status (the same
// object, or an equal one made anew) gives the same object as the last parse (the status writer
// skips it so), even with generations not parsed in between, and a changed one a new object;
// statusesByObject is statusByObject's map of them.
import { describe, expect, it } from 'vitest';
import { CompiledReader, CompiledWriter } from '../../extproc/src/pipeline/snapshot-compiler.js';
import { type ObjectStatus, statusByObject } from '../../extproc/src/translate/status.js';
import { rng } from '../resolve/random-table.js';

/** One object's status, as the compiler thread would hold it. */
function status(name: string, version: number): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'default', name },
    errors: [],
    status: { parents: [{ conditions: [{ type: 'Accepted', status: 'True', message: `v${version}` }] }] },
  } as unknown as ObjectStatus;
}

/** One random edit of the list: a status changed (or made anew, equal), one added, one removed, or the list rotated. */
function edit(rand: () => number, list: ObjectStatus[], step: number, made: { n: number }): ObjectStatus[] {
  const e = rand();
  const i = Math.floor(rand() * list.length);
  const name = (s: ObjectStatus | undefined) => s?.metadata.name ?? '';
  if (e < 0.4) return list.map((s, j) => (j === i ? status(name(s), rand() < 0.2 ? 0 : step) : s));
  if (e < 0.6) return [...list, status(`route-${made.n++}`, step)];
  if (e < 0.8 && list.length > 1) return list.filter((_, j) => j !== i);
  // Reordered: an object keeps its status wherever it now is.
  return [...list.slice(i), ...list.slice(0, i)];
}

describe('CompiledReader.parseStatuses', () => {
  for (const seed of [1, 2, 3]) {
    it(`equals a fresh parse and keeps unchanged statuses as the same objects (seed ${seed})`, () => {
      const rand = rng(seed);
      const [writer, reader] = [new CompiledWriter(), new CompiledReader()];
      const made = { n: 40 };
      let list = Array.from({ length: 40 }, (_, i) => status(`route-${i}`, 0));
      let before = new Map<string, { json: string; status: ObjectStatus }>();
      for (let step = 1; step <= 80; step++) {
        if (step > 1) list = edit(rand, list, step, made);
        const { list: crossing } = writer.statuses.write(list, step, reader.statuses.held);
        const pieces = reader.statuses.read(crossing, step, (text) => ({ text }));
        // Some generations are not read (the file provider reads none).
        if (step > 1 && rand() < 0.2) continue;
        const parsed = reader.parseStatuses(pieces);
        expect(parsed).toEqual(list.map((s) => JSON.parse(JSON.stringify(s)) as unknown));
        list.forEach((s, i) => {
          const was = before.get(s.metadata.name);
          if (was === undefined) return;
          if (was.json === JSON.stringify(s)) expect(parsed[i]).toBe(was.status);
          else expect(parsed[i]).not.toBe(was.status);
        });
        const byObject = reader.statusesByObject(pieces);
        expect([...byObject]).toEqual([...statusByObject(parsed)]);
        for (const [key, s] of statusByObject(parsed)) expect(byObject.get(key)).toBe(s);
        before = new Map(
          list.map((s, i) => [
            s.metadata.name,
            { json: JSON.stringify(s), status: parsed[i] as ObjectStatus },
          ]),
        );
      }
    });
  }
});
