// The generated Envoy routes must choose what the resolver chooses: for random tables, each
// virtual host's routes come in exactly the order resolve/virtual-hosts.ts derives from the
// resolver (whose own property test checks it against resolve()). Envoy tries routes in
// order and takes the first match, so equal order means equal choices.
import { describe, expect, it } from 'vitest';
import { generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { virtualHosts } from '../../extproc/src/ir/virtual-hosts.js';
import type { PolicyTable, TableRoute } from '../../extproc/src/table/policy-table.js';
import type { Json } from '../../extproc/src/json.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
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

function generatedOrder(table: PolicyTable): Map<string, string[]> {
  const { routeConfigurations } = generateGatewayResources(table, { wasmPath: 'x.wasm', sessionKeys: [] });
  const out = new Map<string, string[]>();
  for (const vh of (routeConfigurations[0]?.['virtual_hosts'] ?? []) as Json[]) {
    out.set(
      vh['name'] as string,
      (vh['routes'] as Json[]).map((r) => r['name'] as string),
    );
  }
  return out;
}

describe('generated route order agrees with the resolver', () => {
  it('for 300 random tables, every virtual host lists its matches in resolve() order', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const table = randomTable(rng(seed));
      const generated = generatedOrder(table);
      const expected = new Map(
        virtualHosts(table).map((vh) => [vh.hostname, vh.matches.map((m) => m.matchId)]),
      );
      expect(new Set(generated.keys()), `seed ${seed}: hostnames`).toEqual(new Set(expected.keys()));
      for (const [hostname, order] of expected) {
        expect(generated.get(hostname), `seed ${seed}, ${hostname}`).toEqual(order);
      }
    }
  });
});
