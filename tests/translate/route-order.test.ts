// Ties across routes: the oldest creationTimestamp wins, then {namespace}/{name} order.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { olderFirst, sortedOlderFirst } from '../../extproc/src/translate/precedence.js';

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
});
