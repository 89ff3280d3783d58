// An HTTPRoute and a GRPCRoute on one listener: the older wins when their hostnames intersect.
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

function accepted(grpcHosts: string[], httpHosts: string[]): { grpc: boolean; http: boolean } {
  const hosts = (h: string[]) =>
    h.length > 0 ? `\n  hostnames: [${h.map((x) => JSON.stringify(x)).join(', ')}]` : '';
  const text = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: a-grpc, creationTimestamp: "2026-01-01T00:00:00Z" }
spec:
  parentRefs: [{ name: gw }]${hosts(grpcHosts)}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: b-http, creationTimestamp: "2026-02-01T00:00:00Z" }
spec:
  parentRefs: [{ name: gw }]${hosts(httpHosts)}
`;
  const snap = compileSnapshot([{ path: 'c.yaml', text }]);
  const ok = (kind: string) =>
    snap.statuses.find((s) => s.kind === kind)?.status.parents?.[0]?.conditions[0]?.status === 'True';
  return { grpc: ok('GRPCRoute'), http: ok('HTTPRoute') };
}

describe('HTTPRoute and GRPCRoute sharing a listener', () => {
  it.each([
    [[], ['a.example.com'], false],
    [['a.example.com'], [], false],
    [['a.example.com'], ['a.example.com'], false],
    [['*.example.com'], ['a.example.com'], false],
    [['a.example.com'], ['*.example.com'], false],
    [['*.example.com'], ['*.b.example.com'], false],
    [['*.b.example.com'], ['*.example.com'], false],
    [['a.example.com'], ['b.example.com'], true],
    [['*.example.com'], ['example.com'], true],
    [['*.example.com'], ['*.example.org'], true],
  ])('grpc %j, http %j: both accepted = %s', (grpcHosts, httpHosts, both) => {
    const got = accepted(grpcHosts, httpHosts);
    expect(got.grpc).toBe(true);
    expect(got.http).toBe(both);
  });
});
