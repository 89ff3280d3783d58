// HeadersReadMemo keeps each header name's count from one table to the next and looks at the
// routes between the same start and end of the two route lists alone: after every step of
// seeded random changes (routes replaced, removed, added, two swapped, the list reversed) it
// must give what a fresh memo, counting every route, gives.
import { describe, expect, it } from 'vitest';
import { HeadersReadMemo } from '../../extproc/src/policy/headers-read.js';
import type { TableRoute } from '../../extproc/src/policy/policy-table.js';
import { pick, randomRules, rng } from '../resolve/random-table.js';
import { route } from '../resolve/table-builder.js';

describe('HeadersReadMemo', () => {
  it('reads each name once, lower-case, sorted', () => {
    const headers = (...names: string[]) =>
      names.map((name) => ({ type: 'Exact' as const, name, value: '1' }));
    const routes = [
      route({ name: 'a', rules: [[{ headers: headers('X-B', 'x-a') }], [{}]] }),
      route({ name: 'b', rules: [[{ headers: headers('x-b') }]] }),
    ];
    expect(new HeadersReadMemo().read(routes)).toEqual(['x-a', 'x-b']);
  });

  for (const seed of [1, 2, 3, 4]) {
    it(`reads what a fresh memo reads after every step of random changes (seed ${seed})`, () => {
      const rand = rng(seed);
      let n = 0;
      // Header names of several spellings, so that names come and go and case is folded.
      const next = () =>
        route({
          name: `r${n++}`,
          rules: randomRules(rand, { segments: ['a', 'b'], maxMatches: 3 }).map((rule) =>
            rule.map((m) => ({
              ...m,
              headers: (m.headers ?? []).map((h) => ({
                ...h,
                name: pick(rand, ['x-v', 'X-V', 'x-a', 'x-b']),
              })),
            })),
          ),
        });
      let routes: TableRoute[] = Array.from({ length: 8 }, next);
      const memo = new HeadersReadMemo();
      const seen = new Set<string>();
      for (let step = 0; step < 300; step++) {
        const names = memo.read(routes);
        expect(names, `step ${step}`).toEqual(new HeadersReadMemo().read(routes));
        for (const name of names) seen.add(name);
        const out = [...routes];
        const at = Math.floor(rand() * out.length);
        const choice = Math.floor(rand() * 5);
        if (choice === 0 && out.length > 0) out[at] = next();
        else if (choice === 1 && out.length > 0) out.splice(at, 1);
        else if (choice === 2 && out.length > 1)
          [out[0], out[at]] = [out[at] as TableRoute, out[0] as TableRoute];
        else if (choice === 3) out.reverse();
        else out.splice(at, 0, next());
        routes = out;
      }
      // The tables read headers at all (else the test proves nothing).
      expect(seen.size).toBeGreaterThan(1);
    });
  }
});
