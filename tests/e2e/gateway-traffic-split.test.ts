// Gateway API traffic splitting through the gateway: backendRef weights become locality
// weights inside the rule's one cluster. 1,000 requests land 70/30 within tolerance, and a
// weight-0 backendRef gets no new traffic although its endpoints stay in the cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import {
  ConfigDir,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';

const REQUESTS = 1000;
/** Envoy's locality scheduler is deterministic; the tolerance absorbs ordering at the edges. */
const TOLERANCE = 0.03;

describe('gateway mode: HTTPRoute traffic split', () => {
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let gateway: LocalGateway;

  beforeAll(async () => {
    const stable = [
      await startEchoBackend({ address: '127.0.0.2', name: 'stable-a' }),
      await startEchoBackend({ address: '127.0.0.3', name: 'stable-b' }),
    ];
    const canary = await startEchoBackend({ address: '127.0.0.4', name: 'canary' });
    const retired = await startEchoBackend({ address: '127.0.0.4', name: 'retired' });
    backends = [...stable, canary, retired];
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      serviceYaml('stable', stable),
      serviceYaml('canary', [canary]),
      serviceYaml('retired', [retired]),
    );
    config.write(
      'routes.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: split }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs:
        - { name: stable, port: 80, weight: 70 }
        - { name: canary, port: 80, weight: 30 }
        - { name: retired, port: 80, weight: 0 }
`,
    );
    gateway = await startTestGateway(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
  });

  it(`splits ${REQUESTS} requests 70/30 and sends none to the weight-0 backend`, async () => {
    const url = gatewayUrl(gateway);
    const counts = new Map<string, number>();
    let failed = 0;
    const worker = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${url}/split/${i}`);
        await res.arrayBuffer();
        if (res.status !== 200) failed++;
        const who = res.headers.get('x-backend-instance') ?? 'none';
        counts.set(who, (counts.get(who) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 10 }, () => worker(REQUESTS / 10)));
    const stable = (counts.get('stable-a') ?? 0) + (counts.get('stable-b') ?? 0);
    const canary = counts.get('canary') ?? 0;
    expect(failed).toBe(0);
    expect(counts.get('retired') ?? 0).toBe(0);
    expect(stable + canary).toBe(REQUESTS);
    expect(Math.abs(stable / REQUESTS - 0.7)).toBeLessThanOrEqual(TOLERANCE);
    expect(Math.abs(canary / REQUESTS - 0.3)).toBeLessThanOrEqual(TOLERANCE);
    // Both stable instances share the stable backendRef's 70 %.
    expect(counts.get('stable-a') ?? 0).toBeGreaterThan(REQUESTS * 0.25);
    expect(counts.get('stable-b') ?? 0).toBeGreaterThan(REQUESTS * 0.25);
  });

  it('keeps the weight-0 backend in the rule cluster, so an established session can still be pinned to it', async () => {
    const clusters = await (await fetch(`${gateway.envoy.adminUrl}/clusters?format=json`)).json();
    const rule = (
      clusters as {
        cluster_statuses: Array<{
          name: string;
          host_statuses?: Array<{ address: { socket_address: { port_value: number } } }>;
        }>;
      }
    ).cluster_statuses // The rule's cluster, named after its three backendRefs (ir/rule-clusters.ts, ir/cluster-sharing.ts).
      .find((c) => c.name.startsWith('backend/default/stable:80+default/canary:80+default/retired:80/'));
    const ports = (rule?.host_statuses ?? []).map((h) => h.address.socket_address.port_value);
    expect(ports.sort()).toEqual(backends.map((b) => b.port).sort());
  });
});
