// A rule with both RequestRedirect and RequestMirror: the redirect is answered by the gateway
// and never forwarded, so Envoy has no request to mirror (its mirror policies belong to a
// forwarding route action). Gateway API lets the two be combined and asks an implementation
// that cannot to say so: the rule fails closed with Accepted=False, IncompatibleFilters, rather
// than redirecting and silently dropping the mirror. A redirect alone and a mirror alone stay.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const config = (filters: string, backendRefs = '') => `
apiVersion: gateway.networking.k8s.io/v1
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
      filters:
${filters}${backendRefs}`;

const REDIRECT = '        - { type: RequestRedirect, requestRedirect: { scheme: https } }\n';
const MIRROR = '        - { type: RequestMirror, requestMirror: { backendRef: { name: echo, port: 80 } } }\n';

function compiled(filters: string, backendRefs?: string) {
  const snap = compileSnapshot([{ path: 'r.yaml', text: config(filters, backendRefs) }]);
  const route = snap.statuses.find((s) => s.kind === 'HTTPRoute');
  const accepted = route?.status.parents?.[0]?.conditions.find((c) => c.type === 'Accepted');
  return { rule: snap.table.routes[0]?.rules[0], accepted };
}

describe('RequestRedirect with RequestMirror on one rule', () => {
  it('fails the rule closed: Accepted=False, IncompatibleFilters, naming both filters', () => {
    for (const filters of [REDIRECT + MIRROR, MIRROR + REDIRECT]) {
      const { rule, accepted } = compiled(filters);
      expect(rule?.invalid).toMatchObject({ reason: 'IncompatibleFilters' });
      expect(rule?.invalid?.message).toMatch(/RequestRedirect.*RequestMirror/);
      expect(accepted).toMatchObject({ status: 'False', reason: 'IncompatibleFilters' });
      expect(accepted?.message).toMatch(
        /rules\[0\] fails closed \(answers 500\): .*RequestRedirect.*RequestMirror/,
      );
    }
  });

  it('fails closed too when the redirect is on the backendRefs', () => {
    const { rule, accepted } = compiled(
      MIRROR,
      '      backendRefs:\n        - { name: echo, port: 80, filters: [{ type: RequestRedirect, requestRedirect: { scheme: https } }] }\n',
    );
    expect(rule?.invalid).toMatchObject({ reason: 'IncompatibleFilters' });
    expect(accepted).toMatchObject({ status: 'False', reason: 'IncompatibleFilters' });
  });

  it('keeps a redirect alone and a mirror alone as they are', () => {
    expect(compiled(REDIRECT).rule?.invalid).toBeUndefined();
    expect(compiled(REDIRECT).accepted).toMatchObject({ status: 'True' });
    const mirror = compiled(MIRROR, '      backendRefs: [{ name: echo, port: 80 }]\n');
    expect(mirror.rule?.invalid).toBeUndefined();
    expect(mirror.rule?.mirrors).toHaveLength(1);
  });
});
