// Gateway mode gives rules whose clusters come out the same one shared cluster, named from
// its content; what makes clusters differ keeps them apart.
import { describe, expect, it } from 'vitest';
import { generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import type { Json } from '../../extproc/src/json.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const BASE = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ port: 80, targetPort: 9000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: default, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ port: 9000 }]
endpoints: [{ addresses: ['127.0.0.2'] }, { addresses: ['127.0.0.3'] }]
---
apiVersion: v1
kind: Service
metadata: { name: other, namespace: default }
spec: { ports: [{ port: 80, targetPort: 9001 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: other-1, namespace: default, labels: { kubernetes.io/service-name: other } }
addressType: IPv4
ports: [{ port: 9001 }]
endpoints: [{ addresses: ['127.0.0.4'] }]
`;

/** One HTTPRoute per rule text, each on its own path. */
function routes(rules: readonly string[]): string {
  return rules
    .map(
      (rule, i) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r${i}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /r${i} } }]
${rule}`,
    )
    .join('\n');
}

function generate(
  rules: readonly string[],
  base = BASE,
): {
  clusters: readonly Json[];
  routeClusters: Map<string, string>;
  routeConfigurations: readonly Json[];
} {
  const snap = compileSnapshot([{ path: 'in.yaml', text: base + routes(rules) }]);
  expect(snap.diagnostics).toEqual([]);
  const resources = generateGatewayResources(snap.ir, { wasmPath: 'steadfast.wasm', sessionKeys: [] });
  const routeClusters = new Map<string, string>();
  // Each Envoy route: the rule its name begins with (`…/rule/N/match/M`), and the cluster it
  // sends to.
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const rule = /^(.+\/rule\/\d+)\/match\/\d+/.exec(String(o['name'] ?? ''))?.[1];
      const action = o['route'] as Json | undefined;
      // One cluster, or a weighted split with one entry (a backendRef with its own filters).
      const weighted = (action?.['weighted_clusters'] as { clusters?: Json[] } | undefined)?.clusters;
      const cluster = action?.['cluster'] ?? (weighted?.length === 1 ? weighted[0]?.['name'] : undefined);
      if (rule !== undefined && typeof cluster === 'string') routeClusters.set(rule, cluster);
      Object.values(o).forEach(walk);
    }
  };
  walk(resources.routeConfigurations);
  return { clusters: resources.clusters, routeClusters, routeConfigurations: resources.routeConfigurations };
}

const TO_APP = '      backendRefs: [{ name: app, port: 80 }]';

describe('cluster sharing (gateway mode)', () => {
  it('gives rules with the same backends one cluster, whatever their retry or session', () => {
    const { clusters, routeClusters } = generate([
      TO_APP,
      `${TO_APP}\n      retry: { attempts: 3, codes: [503] }`,
      `${TO_APP}\n      sessionPersistence: { sessionName: s, type: Cookie }`,
    ]);
    expect(clusters).toHaveLength(1);
    const name = clusters[0]?.['name'];
    expect(name).toMatch(/^backend\/default\/app:80\/[0-9a-f]{10}$/);
    expect(routeClusters.size).toBe(3);
    expect(new Set(routeClusters.values())).toEqual(new Set([name]));
    expect((clusters[0]?.['load_assignment'] as Json)['cluster_name']).toBe(name);
  });

  it('keeps apart what makes clusters differ: other backends, other weights, a backoff', () => {
    const { clusters, routeClusters } = generate([
      TO_APP,
      '      backendRefs: [{ name: other, port: 80 }]',
      '      backendRefs: [{ name: app, port: 80, weight: 1 }, { name: other, port: 80, weight: 1 }]',
      '      backendRefs: [{ name: app, port: 80, weight: 3 }, { name: other, port: 80, weight: 1 }]',
      `${TO_APP}\n      retry: { attempts: 2, backoff: 100ms, codes: [503] }`,
    ]);
    expect(clusters).toHaveLength(5);
    // Weights are localities inside a rule's one cluster, so each rule sends to one cluster.
    expect(routeClusters.size).toBe(5);
    expect(new Set(routeClusters.values()).size).toBe(5);
    expect(new Set(clusters.map((c) => c['name'])).size).toBe(5);
  });

  it('shares by what the cluster holds, not by how the rule asked for it', () => {
    // A backendRef's own header filter is the route's business (its weighted cluster), not the
    // cluster's: the table's backends differ, the clusters they make do not.
    const { clusters, routeClusters } = generate([
      TO_APP,
      `      backendRefs:
        - name: app
          port: 80
          filters: [{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: x-team, value: a }] } }]`,
    ]);
    expect(clusters).toHaveLength(1);
    expect(routeClusters.size).toBe(2);
    expect(new Set(routeClusters.values())).toEqual(new Set([clusters[0]?.['name']]));
  });

  it('names a cluster by its content: adding or removing rules does not rename it', () => {
    const one = generate([TO_APP]).clusters.map((c) => c['name']);
    const three = generate(['      backendRefs: [{ name: other, port: 80 }]', TO_APP, TO_APP]).clusters.map(
      (c) => c['name'],
    );
    expect(three).toContain(one[0]);
  });

  it("keeps a cluster's name and the routes when only its endpoints change", () => {
    const before = generate([TO_APP, '      backendRefs: [{ name: other, port: 80 }]']);
    const moved = BASE.replace(
      "[{ addresses: ['127.0.0.2'] }, { addresses: ['127.0.0.3'] }]",
      "[{ addresses: ['127.0.0.3'] }, { addresses: ['127.0.0.5'] }]",
    );
    expect(moved).not.toBe(BASE);
    const after = generate([TO_APP, '      backendRefs: [{ name: other, port: 80 }]'], moved);
    expect(after.clusters.map((c) => c['name'])).toEqual(before.clusters.map((c) => c['name']));
    expect(after.routeConfigurations).toEqual(before.routeConfigurations);
    // The cluster's content still follows the endpoints.
    const app = (r: typeof before) => JSON.stringify(r.clusters.find((c) => /app/.test(String(c['name']))));
    expect(app(after)).not.toBe(app(before));
    expect(app(after)).toContain('127.0.0.5');
  });
});
