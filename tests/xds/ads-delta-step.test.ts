// A delta stream holding a generation's whole map of a type (shared, not copied) is sent what a
// stream keeping its own record of every resource is sent, push for push: over edits, additions,
// removals, a refusal, names let go mid-way and a stream that joins late. The step between two
// generations' maps is worked out once, however many streams take it.
import { describe, expect, it } from 'vitest';
import { DeltaState } from '../../extproc/src/xds/ads-delta.js';
import { step } from '../../extproc/src/xds/ads-delta-step.js';
import { type Resource, resource } from '../../extproc/src/xds/ads-resource.js';
import { rng } from '../resolve/random-table.js';

const TYPE = 'type.googleapis.com/envoy.config.route.v3.VirtualHost';
const made = (name: string, content = name): Resource =>
  resource(name, { type_url: TYPE, value: Buffer.from(content) });
/** A generation's map, from name → content. */
const generation = (contents: Record<string, string>): Map<string, Resource> =>
  new Map(Object.entries(contents).map(([n, c]) => [n, made(n, c)]));
const sent = (push: ReturnType<DeltaState['push']>) =>
  push && {
    resources: push.resources.map((r) => `${r.name}@${r.version}`).sort(),
    removed: [...push.removed_resources].sort(),
  };

/** A map that counts how often its resources are gone through. */
class CountedMap extends Map<string, Resource> {
  reads = 0;
  override values(): MapIterator<Resource> {
    this.reads++;
    return super.values();
  }
}

const GENERATIONS: readonly Record<string, string>[] = [
  { 'rc/a': 'a1', 'rc/b': 'b1', 'rc/c': 'c1' },
  { 'rc/a': 'a2', 'rc/b': 'b1', 'rc/c': 'c1' }, // an edit
  { 'rc/a': 'a2', 'rc/b': 'b1', 'rc/c': 'c1', 'rc/d': 'd1' }, // an addition
  { 'rc/a': 'a2', 'rc/c': 'c2', 'rc/d': 'd1' }, // a removal and an edit
  { 'rc/a': 'a2', 'rc/c': 'c2', 'rc/d': 'd1' }, // the same content, another map
  { 'rc/a': 'a3', 'rc/c': 'c2', 'rc/d': 'd1', 'rc/e': 'e1' },
];

describe('delta steps between shared generations', () => {
  it('sends what a stream with its own record is sent, over a sequence of generations', () => {
    const shared = new DeltaState();
    const own = new DeltaState();
    const late = { shared: new DeltaState(), own: new DeltaState() };
    const both = (map: Map<string, Resource>, s = shared, o = own) => {
      const fast = sent(s.push(TYPE, map));
      expect(fast).toEqual(sent(o.push(TYPE, [...map.values()])));
      return fast;
    };
    const gens = GENERATIONS.map(generation);
    expect(both(gens[0]!)?.resources).toHaveLength(3);
    expect(both(gens[1]!)?.resources).toEqual([`rc/a@${gens[1]!.get('rc/a')!.hash}`]);
    expect(both(gens[2]!)?.resources).toHaveLength(1);
    // Refused: both go back to what they held, and the next step sends it again.
    shared.refused(TYPE);
    own.refused(TYPE);
    expect(both(gens[3]!)).toEqual({
      resources: [`rc/c@${gens[3]!.get('rc/c')!.hash}`, `rc/d@${gens[3]!.get('rc/d')!.hash}`],
      removed: ['rc/b'],
    });
    expect(both(gens[4]!)).toBeUndefined();
    // One joins late, saying what it still holds.
    for (const s of [late.shared, late.own]) s.initial(TYPE, ['rc/a', 'rc/b']);
    expect(both(gens[4]!, late.shared, late.own)?.removed).toEqual(['rc/b']);
    // Mid-way, names let go: neither removed nor kept, sent again when they come back.
    for (const s of [shared, own]) {
      s.unsubscribed(TYPE, ['rc/c']);
      s.forget(TYPE, (n) => n === 'rc/d');
    }
    expect(both(gens[5]!)?.resources).toHaveLength(4);
    expect(both(gens[5]!, late.shared, late.own)?.resources).toHaveLength(2);
  });

  it('works a step out once for every stream taking it', () => {
    const [first, next] = [generation(GENERATIONS[0]!), new CountedMap(generation(GENERATIONS[1]!))];
    const streams = Array.from({ length: 20 }, () => new DeltaState());
    for (const s of streams) s.push(TYPE, first);
    const pushes = streams.map((s) => s.push(TYPE, next));
    expect(next.reads).toBe(1);
    expect(new Set(pushes).size).toBe(1);
    expect(pushes[0]).toBe(step(first, next));
    expect(sent(pushes[0])?.resources).toEqual([`rc/a@${next.get('rc/a')!.hash}`]);
  });

  for (const seed of [1, 2, 3]) {
    it(`steps as a walk of both whole maps would, in the same order, over random generations (seed ${seed})`, () => {
      const rand = rng(seed);
      const names = Array.from({ length: 12 }, (_, i) => `rc/${i}`);
      let older = new Map<string, Resource>();
      for (let g = 0; g < 80; g++) {
        // Each name kept as the same resource, made anew with the same or new content, or left out.
        const newer = new Map<string, Resource>();
        for (const n of [...names].sort(() => rand() - 0.5)) {
          const was = older.get(n);
          const roll = rand();
          if (roll < 0.2) continue;
          if (was && roll < 0.6) newer.set(n, was);
          else if (was && roll < 0.75) newer.set(n, made(n, Buffer.from(was.any.value).toString()));
          else newer.set(n, made(n, `${n}@${g}`));
        }
        const push = step(older, newer);
        const changed = [...newer.values()].filter((r) => older.get(r.name)?.hash !== r.hash);
        expect(push.resources.map((r) => `${r.name}@${r.version}`)).toEqual(
          changed.map((r) => `${r.name}@${r.hash}`),
        );
        expect(push.removed_resources).toEqual([...older.keys()].filter((n) => !newer.has(n)));
        older = newer;
      }
    });
  }
});
