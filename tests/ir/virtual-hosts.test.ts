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
import { portIsolation } from '../../extproc/src/ir/listener-isolation.js';
import type { TableListener, TableRoute } from '../../extproc/src/policy/policy-table.js';

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

/** Listeners on one port with these hostnames (`*`: none). */
function portListeners(hostnames: readonly string[]): TableListener[] {
  return hostnames.map((h, i) => ({
    id: `gateway/default/gw/listener/l${i}`,
    gateway: 'default/gw',
    name: `l${i}`,
    port: 80,
    protocol: 'HTTP',
    ...(h === '*' ? {} : { hostname: h }),
  }));
}

/** Whether a listener hostname (`*`: none) serves a route hostname, as translate intersects them. */
function listenerTakes(listener: string, hostname: string): boolean {
  if (listener === '*' || listener === hostname) return true;
  return listener.startsWith('*.') && hostname !== '*' && hostname.endsWith(listener.slice(1));
}

/** Random routes, each attached to the listeners that take one of its hostnames (some listeners, some hostnames). */
function randomIsolatedTable(rand: () => number): PolicyTable {
  const listeners = portListeners(['*', '*.example.com', 'a.example.com', '*.x.example.com']);
  const routes: TableRoute[] = [];
  for (let i = 0; i < 8; i++) {
    const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 2 });
    const hostnames = [...new Set([pick(rand, HOSTS), pick(rand, HOSTS)])];
    const on = listeners.filter(
      (l) => rand() < 0.5 && hostnames.some((h) => listenerTakes(l.hostname ?? '*', h)),
    );
    if (on.length === 0) continue;
    const served = hostnames.filter((h) => on.some((l) => listenerTakes(l.hostname ?? '*', h)));
    routes.push({ ...route({ name: `r${i}`, hostnames: served, rules }), listeners: on.map((l) => l.id) });
  }
  return { version: 1, listeners, routes };
}

describe('virtualHosts agrees with resolve', () => {
  it('on 200 random tables × 200 requests with listeners of different hostnames on one port', () => {
    const rand = rng(7);
    for (let t = 0; t < 200; t++) {
      const tbl = randomIsolatedTable(rand);
      const ir = buildIr(tbl);
      const port = ir.ports[0];
      if (!port) continue;
      const resolver = compileResolver(ir);
      const hosts = virtualHosts(
        port.routes.map((r) => r.route),
        portIsolation(port.listeners),
      );
      const byId = new Map(
        tbl.routes.flatMap((r) => r.rules.flatMap((rule) => rule.matches.map((m) => [m.id, m]))),
      );
      for (let q = 0; q < 200; q++) {
        const req = randomRequest(rand, SEGMENTS);
        const vh = chooseHost(hosts, req.authority);
        const want = vh?.matches.find((om) => matches(byId.get(om.matchId) as TableMatch, req))?.matchId;
        expect(resolver.resolve(req)?.match.id, `${JSON.stringify(req)} in ${vh?.hostname}`).toBe(want);
      }
    }
  });

  it('keeps each listener hostname to its own routes', () => {
    const listeners = portListeners(['*', '*.example.com', 'a.example.com']);
    const [any, wild, exactListener] = listeners.map((l) => l.id);
    const hosts = virtualHosts(
      [
        {
          ...route({ name: 'any', rules: [[{ path: { type: 'PathPrefix', value: '/' } }]] }),
          listeners: [any as string],
        },
        {
          ...route({
            name: 'wild',
            hostnames: ['*.example.com'],
            rules: [[{ path: { type: 'PathPrefix', value: '/w' } }]],
          }),
          listeners: [wild as string],
        },
        {
          ...route({
            name: 'exact',
            hostnames: ['a.example.com'],
            rules: [[{ path: { type: 'Exact', value: '/e' } }]],
          }),
          listeners: [exactListener as string],
        },
      ],
      portIsolation(listeners),
    );
    expect(hosts.map((h) => [h.hostname, h.matches.map((m) => m.routeId)])).toEqual([
      ['*.example.com', ['httproute/default/wild']],
      ['a.example.com', ['httproute/default/exact']],
      ['*', ['httproute/default/any']],
    ]);
  });

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
