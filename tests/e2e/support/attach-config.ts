// Gateway API configuration directories for attach-mode tests: a Gateway, the Service
// and EndpointSlice of the echo backends, and HTTPRoutes, written into a temporary
// directory that `steadfast serve --config` loads and watches.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AttachRule {
  readonly path: string;
  readonly pathType?: 'PathPrefix' | 'Exact';
  /** Exact header matches, all of which must hold. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly retry?: {
    readonly attempts: number;
    readonly codes?: readonly number[];
    readonly backoff?: string;
  };
  readonly timeouts?: { readonly request?: string; readonly backendRequest?: string };
  /** The rule's `sessionPersistence`, as inline YAML (`{ sessionName: s, type: Cookie }`). */
  readonly session?: string;
}

export interface AttachRoute {
  readonly name: string;
  readonly hostnames?: readonly string[];
  readonly rules: readonly AttachRule[];
}

/** The Gateway, the Service `app` and its EndpointSlice: where the routes attach and point. */
export function baseObjectsYaml(endpoints: readonly { address: string }[], port: number): string {
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
    - { name: http, protocol: HTTP, port: 10000, allowedRoutes: { namespaces: { from: Same } } }
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: ${port} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: default, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ name: http, port: ${port} }]
endpoints:
${endpoints.map((e) => `  - addresses: ['${e.address}']`).join('\n')}
`;
}

function ruleYaml(r: AttachRule): string {
  const headers = Object.entries(r.headers ?? {}).map(
    ([name, value]) => `{ name: ${name}, value: '${value}' }`,
  );
  const lines = [
    `    - matches: [{ path: { type: ${r.pathType ?? 'PathPrefix'}, value: '${r.path}' }` +
      (headers.length > 0 ? `, headers: [${headers.join(', ')}]` : '') +
      ' }]',
    '      backendRefs: [{ name: app, port: 80 }]',
  ];
  if (r.retry) {
    const codes = r.retry.codes ? `, codes: [${r.retry.codes.join(', ')}]` : '';
    const backoff = r.retry.backoff ? `, backoff: ${r.retry.backoff}` : '';
    lines.push(`      retry: { attempts: ${r.retry.attempts}${codes}${backoff} }`);
  }
  if (r.timeouts) {
    const t = Object.entries(r.timeouts).map(([k, v]) => `${k}: ${v}`);
    lines.push(`      timeouts: { ${t.join(', ')} }`);
  }
  if (r.session) lines.push(`      sessionPersistence: ${r.session}`);
  return lines.join('\n');
}

export function routeYaml(route: AttachRoute): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${route.name}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
${route.hostnames ? `  hostnames: [${route.hostnames.map((h) => `'${h}'`).join(', ')}]\n` : ''}  rules:
${route.rules.map(ruleYaml).join('\n')}
`;
}

export function routesYaml(routes: readonly AttachRoute[]): string {
  return routes.map(routeYaml).join('---\n');
}

/** `count` HTTPRoutes: route-i serves host svc-i.example, prefix /r/i, with i % 5 + 1 retries. */
export function manyRoutes(count: number): AttachRoute[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `route-${i}`,
    hostnames: [`svc-${i}.example`],
    rules: [{ path: `/r/${i}`, retry: { attempts: (i % 5) + 1, codes: [503] } }],
  }));
}

export interface ConfigDir {
  readonly path: string;
  /** Replaces a file atomically (write, then rename), as an operator's tooling should. */
  write(name: string, text: string): void;
  remove(): void;
}

export function configDir(files: Readonly<Record<string, string>>): ConfigDir {
  const path = mkdtempSync(join(tmpdir(), 'steadfast-attach-'));
  const write = (name: string, text: string): void => {
    const tmp = join(path, `.${name}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(path, name));
  };
  for (const [name, text] of Object.entries(files)) write(name, text);
  return { path, write, remove: () => rmSync(path, { recursive: true, force: true }) };
}
