// virtualHosts() and resolve() must agree: for random tables and requests, walking the
// chosen virtual host's ordered matches with a plain reference matcher (first match wins,
// as Envoy does) lands on the same match the indexed resolver finds.
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { ResolveRequest } from '../../extproc/src/resolve/request.js';
import { virtualHosts, type VirtualHost } from '../../extproc/src/ir/virtual-hosts.js';
import type { PolicyTable, TableMatch } from '../../extproc/src/table/policy-table.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
import { route, table } from '../resolve/table-builder.js';

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

function randomRequest(rand: () => number): ResolveRequest {
  const host = pick(rand, [
    'a.example.com',
    'b.example.com',
    'c.example.com',
    'd.x.example.com',
    'example.com',
    'other.org',
  ]);
  const seg = pick(rand, [...SEGMENTS, 'a/b/c/d', 'ab', 'a7']);
  const query = rand() < 0.3 ? '?q=1' : '';
  return {
    method: pick(rand, ['GET', 'POST']),
    authority: host,
    path: `/${seg}${rand() < 0.2 ? '/' : ''}${query}`,
    headers: rand() < 0.5 ? { 'x-v': pick(rand, ['1', '2']) } : {},
  };
}

/** The reference matcher: the Gateway API rules written out plainly. */
function matches(m: TableMatch, req: ResolveRequest): boolean {
  const [path = '', query = ''] = req.path.split('?');
  const { type, value } = m.path;
  if (type === 'Exact' && path !== value) return false;
  if (type === 'PathPrefix') {
    const key = value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
    if (!(key === '/' || path === key || path.startsWith(`${key}/`))) return false;
  }
  if (type === 'RegularExpression' && !new RegExp(`^(?:${value})$`).test(path)) return false;
  if (m.method !== undefined && m.method !== req.method) return false;
  for (const h of m.headers) if (req.headers?.[h.name.toLowerCase()] !== h.value) return false;
  const params = new URLSearchParams(query);
  for (const q of m.queryParams) if (params.get(q.name) !== q.value) return false;
  return true;
}

function chooseHost(hosts: readonly VirtualHost[], authority: string): VirtualHost | undefined {
  const exact = hosts.find((h) => h.hostname === authority);
  if (exact) return exact;
  const wild = hosts
    .filter((h) => h.hostname.startsWith('*.') && authority.endsWith(h.hostname.slice(1)))
    .sort((a, b) => b.hostname.length - a.hostname.length)[0];
  return wild ?? hosts.find((h) => h.hostname === '*');
}

describe('virtualHosts agrees with resolve', () => {
  it('on 200 random tables × 200 requests', () => {
    const rand = rng(42);
    let compared = 0;
    for (let t = 0; t < 200; t++) {
      const tbl = randomTable(rand);
      const resolver = compileResolver(tbl);
      const hosts = virtualHosts(tbl);
      const byId = new Map(
        tbl.routes.flatMap((r) => r.rules.flatMap((rule) => rule.matches.map((m) => [m.id, m]))),
      );
      for (let q = 0; q < 200; q++) {
        const req = randomRequest(rand);
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
      ),
    );
    expect(hosts.map((h) => [h.hostname, h.matches.map((m) => m.routeId)])).toEqual([
      ['*.example.com', ['httproute/default/wild', 'httproute/default/any']],
      ['a.example.com', ['httproute/default/exact', 'httproute/default/wild', 'httproute/default/any']],
      ['*', ['httproute/default/any']],
    ]);
  });
});
