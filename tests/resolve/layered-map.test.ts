// LayeredMap against a plain map: after every step of seeded random changes (keys set, changed
// and taken out, a few at a time, past the point where the changes are folded into a new larger
// map), every key reads as in a plain map of the same changes, and a map made earlier still
// reads as it did (the last resolver keeps reading its own).
import { describe, expect, it } from 'vitest';
import { LayeredMap } from '../../extproc/src/resolve/layered-map.js';
import { rng } from './random-table.js';

describe('LayeredMap', () => {
  for (const seed of [1, 2, 3]) {
    it(`reads as a plain map after every step of random changes, and earlier maps as they were (seed ${seed})`, () => {
      const rnd = rng(seed);
      const keys = Array.from({ length: 600 }, (_, i) => `h${i}.example`);
      let plain = new Map(keys.slice(0, 300).map((k) => [k, 0]));
      let layered = LayeredMap.of(new Map(plain));
      const earlier: { plain: Map<string, number>; layered: LayeredMap<number> }[] = [];
      for (let step = 0; step < 200; step++) {
        const changes = new Map<string, number | undefined>();
        for (let c = 0; c < 1 + Math.floor(rnd() * 5); c++) {
          const key = keys[Math.floor(rnd() * keys.length)] as string;
          changes.set(key, rnd() < 0.3 ? undefined : step);
        }
        const next = new Map(plain);
        for (const [k, v] of changes) {
          if (v === undefined) next.delete(k);
          else next.set(k, v);
        }
        earlier.push({ plain, layered });
        plain = next;
        layered = layered.with(changes);
        for (const k of keys) expect(layered.get(k), `step ${step}, ${k}`).toBe(plain.get(k));
        const then = earlier[Math.floor(rnd() * earlier.length)]!;
        for (const k of keys)
          expect(then.layered.get(k), `step ${step}, earlier ${k}`).toBe(then.plain.get(k));
      }
    });
  }
});
