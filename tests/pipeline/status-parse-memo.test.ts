// The service parses only the status texts that changed: after every step of seeded random
// edits, what CompiledReader.parseStatuses returns equals a fresh parse of every text, an
// unchanged text gives the same object as before (the status writer skips it so), and a
// changed one a new object.
import { describe, expect, it } from 'vitest';
import { CompiledReader } from '../../extproc/src/pipeline/snapshot-compiler.js';
import { rng } from '../resolve/random-table.js';

/** One object's status text, as the compiler thread would send it. */
function statusText(name: string, version: number): string {
  return JSON.stringify({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'default', name },
    errors: [],
    status: { parents: [{ conditions: [{ type: 'Accepted', status: 'True', message: `v${version}` }] }] },
  });
}

describe('CompiledReader.parseStatuses', () => {
  for (const seed of [1, 2, 3]) {
    it(`equals a fresh parse and keeps unchanged statuses as the same objects (seed ${seed})`, () => {
      const rand = rng(seed);
      const reader = new CompiledReader();
      let names = Array.from({ length: 40 }, (_, i) => `route-${i}`);
      let texts = names.map((n) => statusText(n, 0));
      let parsed = reader.parseStatuses(texts);
      let made = 40;
      for (let step = 1; step <= 60; step++) {
        const before = new Map(names.map((n, i) => [n, { text: texts[i], status: parsed[i] }]));
        const edit = rand();
        if (edit < 0.4) {
          // A changed status (or, at times, the same text made anew: equal, not the same string).
          const i = Math.floor(rand() * names.length);
          texts[i] = statusText(names[i] as string, rand() < 0.2 ? 0 : step);
        } else if (edit < 0.6) {
          names.push(`route-${made++}`);
          texts.push(statusText(names[names.length - 1] as string, step));
        } else if (edit < 0.8 && names.length > 1) {
          const i = Math.floor(rand() * names.length);
          names = names.filter((_, j) => j !== i);
          texts = texts.filter((_, j) => j !== i);
        } else {
          // Reordered: an object keeps its status wherever it now is.
          const i = Math.floor(rand() * names.length);
          names = [...names.slice(i), ...names.slice(0, i)];
          texts = [...texts.slice(i), ...texts.slice(0, i)];
        }
        parsed = reader.parseStatuses(texts);
        expect(parsed).toEqual(texts.map((t) => JSON.parse(t) as unknown));
        names.forEach((n, i) => {
          const was = before.get(n);
          if (was === undefined) return;
          if (was.text === texts[i]) expect(parsed[i]).toBe(was.status);
          else expect(parsed[i]).not.toBe(was.status);
        });
      }
    });
  }
});
