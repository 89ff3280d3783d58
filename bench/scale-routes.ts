// The HTTPRoute the scale benchmarks generate by the thousand: route-i serves svc-i.example at
// the prefix /r/i (or `path`), with i % 5 + 1 retries on 503. One definition for bench:scale
// and bench:yaml, so both time the same documents.
export function scaleRouteYaml(i: number, path = `/r/${i}`): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: route-${i}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['svc-${i}.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: ${(i % 5) + 1}, codes: [503] }
`;
}
