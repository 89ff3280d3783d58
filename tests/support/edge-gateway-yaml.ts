// The smallest configuration the pipeline tests compile: a GatewayClass, one Gateway `edge` with
// an HTTP listener on 8080, and a Service `app`, all in `default`; and a route on it by name.

export const EDGE_BASE_YAML = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: 9000 }] }
`;

/** HTTPRoute `name` on `edge`, host `<name>.example`, one PathPrefix rule to `app`. */
export function edgeRouteYaml(name: string, path: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['${name}.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
`;
}
