// A RequestHeaderModifier may not name Envoy's router retry and timeout controls: the router
// applies a route's header changes just before it reads them (and never forwards them), so
// `set: x-envoy-retry-on` would replace what the rule's retry stanza asked for (or start
// retries on a rule without one). Such a rule fails closed with the field located; the same
// names in a ResponseHeaderModifier, and other x-envoy-* names, are left alone.
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../extproc/src/gatewayapi/diagnostic.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const config = (ruleFilters: string, refFilters = '') => `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
---
apiVersion: v1
kind: Service
metadata: { name: echo }
spec: { ports: [{ port: 80 }] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /a } }]
      retry: { attempts: 2 }
      filters: [${ruleFilters}]
      backendRefs: [{ name: echo, port: 80, filters: [${refFilters}] }]
`;

function compiled(ruleFilters: string, refFilters?: string) {
  const snap = compileSnapshot([{ path: 'r.yaml', text: config(ruleFilters, refFilters) }]);
  const route = snap.statuses.find((s) => s.kind === 'HTTPRoute');
  const accepted = route?.status.parents?.[0]?.conditions.find((c) => c.type === 'Accepted');
  return {
    rule: snap.table.routes[0]?.rules[0],
    accepted,
    diagnostics: [...snap.diagnostics, ...snap.errors, ...snap.warnings].map(formatDiagnostic),
  };
}

describe("a RequestHeaderModifier naming the router's retry and timeout controls", () => {
  it('fails the rule closed, located, whether it sets, adds or removes one, on the rule or a backendRef', () => {
    const cases: [string, string, RegExp][] = [
      [
        '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: X-Envoy-Retry-On, value: 5xx }] } }',
        '',
        /r\.yaml:\d+ HTTPRoute default\/r spec\.rules\[0\]\.filters\[0\]\.requestHeaderModifier\.set\[0\]\.name: X-Envoy-Retry-On is a retry or timeout control of Envoy's router/,
      ],
      [
        "{ type: RequestHeaderModifier, requestHeaderModifier: { add: [{ name: x-envoy-max-retries, value: '5' }] } }",
        '',
        /requestHeaderModifier\.add\[0\]\.name: x-envoy-max-retries is a retry or timeout control/,
      ],
      [
        '{ type: RequestHeaderModifier, requestHeaderModifier: { remove: [x-envoy-upstream-rq-timeout-ms] } }',
        '',
        /requestHeaderModifier\.remove\[0\]: x-envoy-upstream-rq-timeout-ms is a retry or timeout control/,
      ],
      [
        '',
        '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: x-envoy-retry-on, value: reset }] } }',
        /spec\.rules\[0\]\.backendRefs\[0\]\.filters\[0\]\.requestHeaderModifier\.set\[0\]\.name: x-envoy-retry-on is a retry/,
      ],
    ];
    for (const [ruleFilters, refFilters, located] of cases) {
      const { rule, accepted, diagnostics } = compiled(ruleFilters, refFilters);
      expect(diagnostics).toContainEqual(expect.stringMatching(located));
      expect(rule?.invalid).toMatchObject({ reason: 'UnsupportedValue' });
      expect(accepted?.message).toMatch(/rules\[0\] fails closed \(answers 500\)/);
    }
  });

  it('leaves a response header of that name and other x-envoy-* request headers alone', () => {
    const { rule, diagnostics } = compiled(
      [
        '{ type: ResponseHeaderModifier, responseHeaderModifier: { set: [{ name: x-envoy-retry-on, value: x }] } }',
        '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: x-envoy-tenant, value: a }] } }',
      ].join(', '),
    );
    expect(diagnostics.filter((d) => !/has no endpoints/.test(d))).toEqual([]);
    expect(rule?.invalid).toBeUndefined();
    expect(rule?.requestHeaders?.set).toEqual([{ name: 'x-envoy-tenant', value: 'a' }]);
  });
});
