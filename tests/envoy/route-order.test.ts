// The generated Envoy routes must choose what the resolver chooses: for random tables and
// requests, walking the generated virtual host's routes in order, first match winning as
// Envoy does (with a plain reference matcher), lands on the match resolve() finds. The
// expected answer comes from the resolver, not from the ordering the generator itself uses.
import { describe, expect, it } from 'vitest';
import { generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { PolicyTable, TableMatch, TableRoute } from '../../extproc/src/policy/policy-table.js';
import type { Json } from '../../extproc/src/json.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
import { chooseHost, matches, randomRequest } from '../resolve/reference-matcher.js';
import { route } from '../resolve/table-builder.js';

const SEGMENTS = ['', 'a', 'b', 'a/b', 'a/b/c', 'b/a', 'a/'];
const LISTENER = 'gateway/default/gw/listener/http';

function randomTable(rand: () => number): PolicyTable {
  const routes: TableRoute[] = [];
  for (let i = 0; i < 8; i++) {
    const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 3 });
    // As translate/ writes them for one listener without a hostname: `*` (a route without
    // hostnames) stands alone.
    const picked = [...new Set([pick(rand, HOSTS), ...(rand() < 0.2 ? [pick(rand, HOSTS)] : [])])];
    const hostnames = picked.includes('*') ? ['*'] : picked;
    routes.push({ ...route({ name: `r${i}`, hostnames, rules }), listeners: [LISTENER] });
  }
  return {
    version: 1,
    listeners: [{ id: LISTENER, gateway: 'default/gw', name: 'http', port: 8080, protocol: 'HTTP' }],
    routes,
  };
}

/** Each generated virtual host (named by its hostname) with its routes' names (match ids), in order. */
function generatedOrder(table: PolicyTable): { hostname: string; routes: string[] }[] {
  const { routeConfigurations } = generateGatewayResources(buildIr(table), {
    wasmPath: 'x.wasm',
    sessionKeys: [],
  });
  return ((routeConfigurations[0]?.['virtual_hosts'] ?? []) as Json[]).map((vh) => ({
    hostname: vh['name'] as string,
    routes: (vh['routes'] as Json[]).map((r) => r['name'] as string),
  }));
}

describe('generated route order agrees with the resolver', () => {
  it('for 300 random tables × 100 requests, the first generated route that matches is resolve()’s match', () => {
    let compared = 0;
    let matched = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rand = rng(seed);
      const table = randomTable(rand);
      const resolver = compileResolver(buildIr(table));
      const hosts = generatedOrder(table);
      const byId = new Map(
        table.routes.flatMap((r) => r.rules.flatMap((rule) => rule.matches.map((m) => [m.id, m]))),
      );
      // One virtual host per hostname the routes name.
      expect(new Set(hosts.map((h) => h.hostname)), `seed ${seed}: hostnames`).toEqual(
        new Set(table.routes.flatMap((r) => r.hostnames)),
      );
      for (let q = 0; q < 100; q++) {
        const req = randomRequest(rand, SEGMENTS);
        const vh = chooseHost(hosts, req.authority);
        const first = vh?.routes.find((name) => matches(byId.get(name) as TableMatch, req));
        const want = resolver.resolve(req)?.match.id;
        expect(first, `seed ${seed}: ${JSON.stringify(req)} in ${vh?.hostname}`).toBe(want);
        compared++;
        if (want !== undefined) matched++;
      }
    }
    expect(compared).toBe(30_000);
    // Not vacuous: most requests find a route.
    expect(matched).toBeGreaterThan(compared / 2);
  });
});
