// virtualHosts() and resolve() must agree: for random tables and requests, walking the
// chosen virtual host's ordered matches with a plain reference matcher (first match wins,
// as Envoy does) lands on the same match the indexed resolver finds.
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import { virtualHosts } from '../../extproc/src/ir/virtual-hosts.js';
import type { PolicyTable, TableMatch } from '../../extproc/src/policy/policy-table.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
import { chooseHost, matches, randomRequest } from '../resolve/reference-matcher.js';
import { route, table } from '../resolve/table-builder.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

const SEGMENTS = ['', 'a', 'b', 'a/b', 'a/b/c', 'b/a'];

function randomTable(rand: () => number): PolicyTable {
  const routes = [];
  for (let i = 0; i < 8; i++) {
    const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 2 });
    const hostnames = rand() < 0.2 ? [pick(rand, HOSTS), pick(rand, HOSTS)] : [pick(rand, HOSTS)];
    routes.push(route({ name: `r${i}`, hostnames: [...new Set(hostnames)], rules }));
  }
  return table(...routes);
}

describe('virtualHosts agrees with resolve', () => {
  it('on 200 random tables × 200 requests', () => {
    const rand = rng(42);
    let compared = 0;
    for (let t = 0; t < 200; t++) {
      const tbl = randomTable(rand);
      const resolver = compileResolver(buildIr(tbl));
      const hosts = virtualHosts(tbl.routes);
      const byId = new Map(
        tbl.routes.flatMap((r) => r.rules.flatMap((rule) => rule.matches.map((m) => [m.id, m]))),
      );
      for (let q = 0; q < 200; q++) {
        const req = randomRequest(rand, SEGMENTS);
        const vh = chooseHost(hosts, req.authority);
        const want = vh?.matches.find((om) => matches(byId.get(om.matchId) as TableMatch, req))?.matchId;
        expect(resolver.resolve(req)?.match.id, `${JSON.stringify(req)} in ${vh?.hostname}`).toBe(want);
        compared++;
      }
    }
    expect(compared).toBe(40_000);
  });

  it('lists a hostname’s own matches, then covering wildcards, then any host', () => {
    const hosts = virtualHosts(
      table(
        route({ name: 'any', rules: [[{ path: { type: 'PathPrefix', value: '/' } }]] }),
        route({
          name: 'wild',
          hostnames: ['*.example.com'],
          rules: [[{ path: { type: 'PathPrefix', value: '/w' } }]],
        }),
        route({
          name: 'exact',
          hostnames: ['a.example.com'],
          rules: [[{ path: { type: 'Exact', value: '/e' } }]],
        }),
      ).routes,
    );
    expect(hosts.map((h) => [h.hostname, h.matches.map((m) => m.routeId)])).toEqual([
      ['*.example.com', ['httproute/default/wild', 'httproute/default/any']],
      ['a.example.com', ['httproute/default/exact', 'httproute/default/wild', 'httproute/default/any']],
      ['*', ['httproute/default/any']],
    ]);
  });
});
