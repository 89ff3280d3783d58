// The objects bench:scale serves: one Gateway, one Service with its EndpointSlice (the
// benchmark's minimal backend), and N routes in files of ROUTES_PER_FILE, written as a
// repository of many teams holds them.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scaleRouteYaml } from './scale-routes.js';

/** Where the files provider's EndpointSlice points: the minimal backend listens on both. */
export const ENDPOINTS = ['127.0.0.2', '127.0.0.3'] as const;

export type Provider = 'files' | 'kubernetes';

/**
 * The Gateway, the Service and its slice. An API server refuses loopback addresses in IPv4
 * slices: there the endpoint is an FQDN under .localhost, which Envoy resolves to 127.0.0.1
 * (the backend listens there too). `endpoints` (files only) overrides the slice's addresses.
 */
export function baseYaml(
  listenerPort: number,
  backendPort: number,
  provider: Provider = 'files',
  endpoints: readonly string[] = ENDPOINTS,
): string {
  const slice =
    provider === 'files'
      ? `addressType: IPv4
ports: [{ name: http, port: ${backendPort} }]
endpoints:
${endpoints.map((a) => `  - addresses: ['${a}']`).join('\n')}`
      : `addressType: FQDN
ports: [{ name: http, port: ${backendPort} }]
endpoints:
  - addresses: [scale.localhost]`;
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: ${listenerPort} }
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: ${backendPort} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: default, labels: { kubernetes.io/service-name: app } }
${slice}
`;
}

/**
 * Routes per file: a repository of many teams keeps them in many files, and one file stays
 * under the control service's 16 MiB limit for a single file (10,000 of these are 3.4 MB).
 */
export const ROUTES_PER_FILE = 10_000;

/** The file that holds route i. */
export const routesFile = (i: number): string => `routes-${Math.floor(i / ROUTES_PER_FILE)}.yaml`;

/**
 * The routes of file `routesFile(first)`: routes first … min(first + ROUTES_PER_FILE, n) - 1,
 * with route `edited.i` (when given) at `edited.path` instead of its own.
 */
export function routesYaml(first: number, n: number, edited?: { i: number; path: string }): string {
  const last = Math.min(first + ROUTES_PER_FILE, n);
  return Array.from({ length: last - first }, (_, k) => {
    const i = first + k;
    return scaleRouteYaml(i, i === edited?.i ? edited.path : undefined);
  }).join('---\n');
}

/** Writes under a temporary name, then renames: an editor's or a deploy tool's atomic save. */
export function save(dir: string, name: string, text: string): void {
  writeFileSync(join(dir, `.${name}.tmp`), text);
  renameSync(join(dir, `.${name}.tmp`), join(dir, name));
}

/** base.yaml and the route files of N routes, in `dir`. */
export function writeScaleConfig(
  dir: string,
  n: number,
  ports: { listener: number; backend: number },
  provider: Provider,
): void {
  save(dir, 'base.yaml', baseYaml(ports.listener, ports.backend, provider));
  for (let first = 0; first < n; first += ROUTES_PER_FILE) save(dir, routesFile(first), routesYaml(first, n));
}
