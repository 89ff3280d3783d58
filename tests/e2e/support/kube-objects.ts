// The Kubernetes objects the end-to-end tests against a real API server start from: the
// session-key Secret, steadfast's GatewayClass, a Gateway `gw` with one HTTP listener, and the
// Service `app` whose EndpointSlices point at the test's echo backends (app.localhost).

export const CONTROLLER = 'steadfast.dev/gateway-controller';

/** The Secret `steadfast-system/session-keys` holding these keys, one per line. */
export function sessionKeySecretYaml(keys: readonly string[]): string {
  return `apiVersion: v1
kind: Secret
metadata: { name: session-keys, namespace: steadfast-system }
data:
  keys: ${Buffer.from(`${keys.join('\n')}\n`).toString('base64')}
`;
}

/** steadfast's GatewayClass and the Gateway `default/gw` listening on `port`. */
export function gatewayYaml(port: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: ${CONTROLLER} }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: ${port} }]
`;
}

/** The Service `default/app` and an EndpointSlice per backend port. */
export function appServiceYaml(backendPorts: readonly number[]): string {
  const slices = backendPorts.map(
    (port, i) => `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: app-${i}
  namespace: default
  labels: { kubernetes.io/service-name: app }
addressType: FQDN
ports: [{ name: http, port: ${port} }]
endpoints: [{ addresses: [app.localhost] }]
`,
  );
  return `apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80 }] }
${slices.join('')}`;
}

export interface ShopRoute {
  /** The `/cart` rule's own lines (retry, sessionPersistence), indented as rule fields. */
  readonly cartRule?: string;
  /** The `/cart` rule's backend Service; default `app`. */
  readonly backend?: string;
  /** A second rule for this path prefix, to app. */
  readonly extraPath?: string;
}

/** The HTTPRoute `default/shop` on gw for shop.example: `/cart`, and an extra path if asked. */
export function shopRouteYaml({ cartRule = '', backend = 'app', extraPath }: ShopRoute = {}): string {
  const extra = extraPath
    ? `    - matches: [{ path: { type: PathPrefix, value: ${extraPath} } }]
      backendRefs: [{ name: app, port: 80 }]
`
    : '';
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [shop.example]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
${cartRule}      backendRefs: [{ name: ${backend}, port: 80 }]
${extra}`;
}
