// XBackendTrafficPolicy.retryConstraint (GEP-1731's retry budget) in gateway mode: the
// rule's cluster gets Envoy's retry budget, and retries past it are not made — the
// failure is returned as is. The same rule without a policy retries every request.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { type LocalGateway, startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { configDir } from './support/attach-config.js';
import { curl } from './support/curl.js';
import { TEST_SESSION_KEY } from './support/gateway-fixture.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

const service = (name: string, b: RunningBackend): string => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: ${b.port} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: default, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
ports: [{ name: http, port: ${b.port} }]
endpoints: [{ addresses: ['${b.address}'] }]
`;

describe('gateway mode: retry budget from XBackendTrafficPolicy', () => {
  let backend: RunningBackend;
  let gateway: LocalGateway;
  const config = configDir({});

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'budget-backend' });
    config.write(
      'objects.yaml',
      [
        `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 10000 }]
`,
        service('budgeted', backend),
        service('unlimited', backend),
        `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: { name: tight, namespace: default }
spec:
  targetRefs: [{ group: '', kind: Service, name: budgeted }]
  retryConstraint:
    budget: { percent: 0, interval: 10s }
    minRetryRate: { count: 1, interval: 1s }
`,
        `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /budgeted } }]
      retry: { attempts: 1, codes: [503] }
      backendRefs: [{ name: budgeted, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /unlimited } }]
      retry: { attempts: 1, codes: [503] }
      backendRefs: [{ name: unlimited, port: 80 }]
`,
      ].join('---\n'),
    );
    gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [config.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: { 10000: 0 },
      debounceMs: 50,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    config.remove();
  });

  /** Six requests at once; each first attempt answers 503 after 400 ms, a retry answers 200 after 400 ms. */
  async function burst(path: string): Promise<number[]> {
    return Promise.all(
      Array.from({ length: 6 }, () =>
        curl(
          `${gateway.envoy.url()}${path}?uuid=${randomUUID()}&succeedAfter=1&responseCode=503&delay=400ms`,
        ).then((r) => r.status),
      ),
    );
  }

  it('without a budget, every request is retried', async () => {
    expect(await burst('/unlimited')).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('past the budget, the failure is returned instead of retried', async () => {
    const statuses = await burst('/budgeted');
    // percent 0 with minRetryRate 1: one retry at a time; the others overflow.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(4);
    const stats = await gateway.envoy.stats();
    const overflow = [...stats]
      .filter(([k]) => k.endsWith('.upstream_rq_retry_overflow'))
      .reduce((n, [, v]) => n + v, 0);
    expect(overflow).toBeGreaterThanOrEqual(4);
  });
});
