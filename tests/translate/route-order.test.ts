// Ties across routes: the oldest creationTimestamp wins, then {namespace}/{name} order.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { KeptOlderFirst, olderFirst, sortedOlderFirst } from '../../extproc/src/translate/precedence.js';
import { rng } from '../resolve/random-table.js';

const gateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80, allowedRoutes: { namespaces: { from: All } } }]
`;

function routeYaml(ns: string, name: string, created?: string): string {
  const ts = created ? `, creationTimestamp: "${created}"` : '';
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: ${ns}${ts} }
spec:
  parentRefs: [{ name: gw, namespace: default }]
  rules: [{ matches: [{ path: { value: /same } }] }]
`;
}

function winner(...routes: string[]): string | undefined {
  const text = [gateway, ...routes].join('\n---\n');
  const snap = compileSnapshot([{ path: 'config.yaml', text }]);
  return snap.resolver.resolve({ method: 'GET', authority: 'x', path: '/same' })?.route.id;
}

describe('route precedence on ties', () => {
  it('prefers the oldest route', () => {
    expect(
      winner(
        routeYaml('default', 'a-new', '2026-03-01T00:00:00Z'),
        routeYaml('default', 'z-old', '2025-03-01T00:00:00Z'),
      ),
    ).toBe('httproute/default/z-old');
  });

  it('then the first in {namespace}/{name} order', () => {
    expect(winner(routeYaml('team-b', 'a'), routeYaml('team-a', 'z'))).toBe('httproute/team-a/z');
    expect(winner(routeYaml('default', 'b'), routeYaml('default', 'a'))).toBe('httproute/default/a');
  });

  it('lists the table routes in that order', () => {
    const text = [gateway, routeYaml('default', 'b'), routeYaml('default', 'a', '2026-01-01T00:00:00Z')].join(
      '\n---\n',
    );
    const snap = compileSnapshot([{ path: 'c.yaml', text }]);
    expect(snap.table.routes.map((r) => r.name)).toEqual(['a', 'b']);
  });
});

describe('sortedOlderFirst', () => {
  it('orders as sorting with olderFirst does: timestamps, then namespace/name as one string', () => {
    // 'ns' is a prefix of 'ns-a': as one string, 'ns/…' sorts after 'ns-a/…' ('/' > '-').
    const namespaces = ['ns', 'ns-a', 'ns.b', 'default', 'a'];
    const names = ['r', 'r-1', 'r.2', 'x'];
    const stamps = [
      undefined,
      'not a time',
      '2026-01-01T00:00:00Z',
      '2026-01-02T00:00:00Z',
      '2025-12-31T23:59:59Z',
    ];
    let seed = 7;
    const pick = <T>(xs: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return xs[seed % xs.length] as T;
    };
    const items = Array.from({ length: 300 }, (_, i) => {
      const creationTimestamp = pick(stamps);
      return {
        i,
        namespace: pick(namespaces),
        name: pick(names),
        ...(creationTimestamp !== undefined ? { creationTimestamp } : {}),
      };
    });
    const expected = [...items].sort(olderFirst).map((o) => o.i);
    expect(sortedOlderFirst(items).map((o) => o.i)).toEqual(expected);
    expect(
      sortedOlderFirst([
        { namespace: 'ns', name: 'x' },
        { namespace: 'ns-a', name: 'x' },
      ]).map((o) => o.namespace),
    ).toEqual(['ns-a', 'ns']);
  });

  // Seeds 1-3 with few names (ties common: the list sorted), 4-6 with many (ties rare: items put in one by one).
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`sorts from the last order as sortedOlderFirst sorts afresh, list after list (seed ${seed})`, () => {
      const rnd = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
      type Item = {
        readonly i: number;
        readonly namespace: string;
        readonly name: string;
        readonly creationTimestamp?: string;
      };
      let serial = 0;
      // Few names, so that ties (same time and name, different objects) are common; or many.
      const item = (): Item => {
        const creationTimestamp = pick([
          undefined,
          undefined,
          '2026-01-01T00:00:00Z',
          '2025-06-01T00:00:00Z',
          'bad',
        ]);
        return {
          i: serial++,
          namespace: pick(['default', 'team-a']),
          name:
            seed <= 3
              ? pick(['a', 'b', 'c', 'route-1', 'route-10', 'route-2'])
              : `route-${Math.floor(rnd() * 5000)}`,
          ...(creationTimestamp !== undefined ? { creationTimestamp } : {}),
        };
      };
      const kept = new KeptOlderFirst<Item>();
      let list = Array.from({ length: 40 }, item);
      for (let step = 0; step < 300; step++) {
        expect(
          kept.sorted(list).map((o) => o.i),
          `step ${step}`,
        ).toEqual(sortedOlderFirst(list).map((o) => o.i));
        const r = rnd();
        const at = Math.floor(rnd() * list.length);
        if (r < 0.3) list = [...list.slice(0, at), item(), ...list.slice(at)];
        else if (r < 0.5) list = list.filter((_, k) => k !== at);
        else if (r < 0.6) list = [...list].reverse();
        else if (r < 0.7) list = [...list.slice(at), ...list.slice(0, at)];
        else if (r < 0.75 && list.length > 0) list = [...list, list[at] as Item];
        else if (r < 0.85) list = list.map((o, k) => (k === at ? item() : o));
      }
    });
  }
});
