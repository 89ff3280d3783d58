// A Header session named with "_" is valid Gateway API, but gateway mode drops request
// headers with underscores (docs/hardening.md): the route says so, located, and still works.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const BASE = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
---
apiVersion: v1
kind: Service
metadata: { name: app }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ port: 8080 }]
endpoints: [{ addresses: [127.0.0.2] }]
`;

function route(sessionName: string, type: 'Header' | 'Cookie'): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /s } }]
      sessionPersistence: { sessionName: ${sessionName}, type: ${type} }
      backendRefs: [{ name: app, port: 80 }]
`;
}

function compile(routeText: string) {
  const snapshot = compileSnapshot([
    { path: 'base.yaml', text: BASE },
    { path: 'route.yaml', text: routeText },
  ]);
  const shop = snapshot.statuses.find((s) => s.kind === 'HTTPRoute');
  return { snapshot, shop };
}

describe('a Header session named with "_"', () => {
  it('warns on the rule, located, and the route stays Accepted with its session', () => {
    const { snapshot, shop } = compile(route('x_shop_session', 'Header'));
    expect(shop?.warnings).toEqual([
      {
        field: 'spec.rules[1].sessionPersistence',
        line: 9,
        code: 'underscore-session-header',
        message: expect.stringContaining('the session header x_shop_session has a "_"'),
      },
    ]);
    expect(JSON.stringify(shop?.status)).toContain('"type":"Accepted","status":"True"');
    expect(snapshot.table.routes[0]?.rules[1]?.policy.session).toMatchObject({
      type: 'header',
      name: 'x_shop_session',
    });
    expect(snapshot.warnings.map((w) => w.code)).toEqual(['underscore-session-header']);
  });

  it('is not said of a header named with "-", nor of a cookie with "_"', () => {
    expect(compile(route('x-shop-session', 'Header')).shop?.warnings ?? []).toEqual([]);
    expect(compile(route('shop_session', 'Cookie')).shop?.warnings ?? []).toEqual([]);
  });
});
