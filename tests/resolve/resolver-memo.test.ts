// A resolver compiled with the last one's memo (ResolverMemo: each port's buckets, rebuilt for
// the hostnames of the routes that changed) must answer exactly as one compiled afresh, after
// every step of seeded random edits: routes added, removed, replaced by new objects, and the
// same route objects moved (which changes their precedence without changing them).
import { describe, expect, it } from 'vitest';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import type { TableRoute } from '../../extproc/src/policy/policy-table.js';
import { type Resolver, ResolverMemo, compileResolver } from '../../extproc/src/resolve/compile.js';
import { HOSTS, pick, randomRules, rng } from './random-table.js';
import { route, table } from './table-builder.js';

const SEGMENTS = ['a', 'a/b', 'c'];
const PATHS = ['/', '/a', '/a/b', '/a/b/c', '/a7', '/c', '/c/d', '/x'];
const HEADERS: readonly Record<string, string>[] = [{}, { 'x-v': '1' }];
const AUTHORITIES = ['a.example.com', 'b.example.com', 'y.example.com', 'z.x.example.com', 'other.test'];

function randomRoute(rand: () => number, name: string): TableRoute {
  const hostnames = [...new Set([pick(rand, HOSTS), ...(rand() < 0.3 ? [pick(rand, HOSTS)] : [])])];
  return route({ name, hostnames, rules: randomRules(rand, { segments: SEGMENTS, maxMatches: 2 }) });
}

/** One random edit of the routes, in place; what it did. */
function edit(routes: TableRoute[], rand: () => number, serial: { n: number }): string {
  const at = Math.floor(rand() * routes.length);
  const r = rand();
  if (r < 0.25 || routes.length < 2) {
    routes.splice(at, 0, randomRoute(rand, `r${serial.n++}`));
    return `added at ${at}`;
  }
  if (r < 0.45) {
    routes.splice(at, 1);
    return `removed at ${at}`;
  }
  if (r < 0.7) {
    routes[at] = randomRoute(rand, `r${serial.n++}`);
    return `replaced at ${at}`;
  }
  // The same object elsewhere: its precedence changes, the object does not.
  const [moved] = routes.splice(at, 1);
  const to = Math.floor(rand() * (routes.length + 1));
  routes.splice(to, 0, moved as TableRoute);
  return `moved ${at} to ${to}`;
}

/** Every answer for a grid of requests, and what the resolver says of itself. */
function answers(resolver: Resolver): unknown {
  const out: string[] = [];
  for (const authority of AUTHORITIES) {
    for (const path of PATHS) {
      for (const headers of HEADERS) {
        const r = resolver.resolve({ method: 'GET', authority, path, headers });
        out.push(
          `${authority}${path} ${JSON.stringify(headers)}: ${r ? `${r.routeRuleId} ${r.hostname}` : '-'}`,
        );
      }
    }
  }
  return { out, size: resolver.size, scopes: AUTHORITIES.map((a) => resolver.scope(a)) };
}

describe('ResolverMemo', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`answers as a fresh compile after every step of random edits (seed ${seed})`, () => {
      const rand = rng(seed);
      const serial = { n: 0 };
      const routes = Array.from({ length: 12 }, () => randomRoute(rand, `r${serial.n++}`));
      const memo = new ResolverMemo();
      const steps: string[] = [];
      for (let step = 0; step < 120; step++) {
        const ir = buildIr(table(...routes));
        expect(answers(compileResolver(ir, 'g', memo)), steps.join('; ')).toEqual(
          answers(compileResolver(ir, 'g')),
        );
        steps.push(edit(routes, rand, serial));
      }
    });
  }
});
