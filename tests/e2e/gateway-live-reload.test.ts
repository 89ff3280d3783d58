// Live reload in gateway mode: configuration changes reach a running Envoy through its
// watched resource files, without a restart and without failing one request of a steady
// load; a configuration that does not compile keeps the last good one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import {
  ConfigDir,
  appliedAtLeast,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';

function routes(rules: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: app }
spec:
  parentRefs: [{ name: gw }]
  rules:
${rules}`;
}

const V1_ONLY = routes(`    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: v1, port: 80 }]
`);
const V2_ONLY = routes(`    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: v2, port: 80 }]
`);
// A DNS cluster (FQDN endpoint) warms only after its first resolution: routes wait for it.
const BY_NAME = routes(`    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: v3-by-name, port: 80 }]
    - matches: [{ path: { value: /spare } }]
      backendRefs: [{ name: v1, port: 80 }]
`);
// A new rule in front renumbers the rules: every cluster name changes at once.
const RENUMBERED = routes(`    - matches: [{ path: { value: /other } }]
      backendRefs: [{ name: v1, port: 80 }]
    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: v1, port: 80, weight: 1 }, { name: v2, port: 80, weight: 1 }]
`);

interface Load {
  readonly ok: number;
  readonly failures: string[];
  readonly seen: Map<string, number>;
  stop(): Promise<void>;
}

/** Keeps `workers` requests in flight until stopped, recording every answer. */
function steadyLoad(url: string, workers: number): Load {
  let running = true;
  const state = { ok: 0, failures: [] as string[], seen: new Map<string, number>() };
  const loop = async (): Promise<void> => {
    while (running) {
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status === 200) state.ok++;
        else state.failures.push(`status ${res.status}`);
        const who = res.headers.get('x-backend-instance') ?? 'none';
        state.seen.set(who, (state.seen.get(who) ?? 0) + 1);
      } catch (e) {
        state.failures.push((e as Error).message);
      }
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return {
    get ok() {
      return state.ok;
    },
    failures: state.failures,
    seen: state.seen,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('gateway mode: live reload', () => {
  const config = new ConfigDir();
  let v1: RunningBackend;
  let v2: RunningBackend;
  let v3: RunningBackend;
  let gateway: LocalGateway;
  const logs: string[] = [];

  beforeAll(async () => {
    v1 = await startEchoBackend({ address: '127.0.0.2', name: 'v1' });
    v2 = await startEchoBackend({ address: '127.0.0.3', name: 'v2' });
    v3 = await startEchoBackend({ address: '127.0.0.1', name: 'v3' });
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      serviceYaml('v1', [v1]),
      serviceYaml('v2', [v2]),
      `apiVersion: v1
kind: Service
metadata: { name: v3-by-name }
spec:
  ports: [{ name: app, port: 80, targetPort: app }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: v3-by-name-1, labels: { kubernetes.io/service-name: v3-by-name } }
addressType: FQDN
ports: [{ name: app, port: ${v3.port} }]
endpoints: [{ addresses: [localhost] }]
`,
    );
    config.write('routes.yaml', V1_ONLY);
    gateway = await startTestGateway(config, 50, (line) => logs.push(line));
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([v1?.close(), v2?.close(), v3?.close()]);
    config.remove();
  });

  it('applies route and cluster changes under load without failing a request or restarting Envoy', async () => {
    const pid = gateway.envoy.child.pid;
    const load = steadyLoad(`${gatewayUrl(gateway)}/app`, 8);
    await new Promise((r) => setTimeout(r, 300));
    const steps = [V2_ONLY, RENUMBERED, BY_NAME, V1_ONLY, V2_ONLY];
    for (const step of steps) {
      const next = gateway.config.generation + 1;
      config.write('routes.yaml', step);
      await appliedAtLeast(gateway, next, 700);
    }
    await load.stop();
    expect(load.failures).toEqual([]);
    expect(load.ok).toBeGreaterThan(200);
    expect(load.seen.get('v1') ?? 0).toBeGreaterThan(0);
    expect(load.seen.get('v2') ?? 0).toBeGreaterThan(0);
    expect(load.seen.get('v3') ?? 0).toBeGreaterThan(0);
    expect(gateway.envoy.child.pid).toBe(pid);
    expect(gateway.envoy.child.exitCode).toBeNull();
    // The last configuration (v2 only) is what Envoy serves now.
    const res = await fetch(`${gatewayUrl(gateway)}/app`);
    expect(res.headers.get('x-backend-instance')).toBe('v2');
    const stats = await gateway.envoy.stats();
    expect(stats.get('cluster_manager.cds.update_rejected') ?? 0).toBe(0);
    expect(stats.get('listener_manager.lds.update_rejected') ?? 0).toBe(0);
  });

  it('keeps the last good configuration when a reload fails', async () => {
    const generation = gateway.config.generation;
    config.write('routes.yaml', `${V1_ONLY}\n  rules: [unclosed\n`);
    const deadline = Date.now() + 5000;
    while (!gateway.config.lastFailure && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(gateway.config.lastFailure?.message).toMatch(/kept the previous configuration/);
    expect(gateway.config.generation).toBe(generation);
    const res = await fetch(`${gatewayUrl(gateway)}/app`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-backend-instance')).toBe('v2');
  });

  it('keeps serving the previous routes when Envoy refuses an update, and says so', async () => {
    // RE2 caps repetition at 1000; JavaScript and the Gateway API schema accept this.
    const refused = routes(`    - matches: [{ path: { type: RegularExpression, value: '/app/a{2000}' } }]
      backendRefs: [{ name: v1, port: 80 }]
    - matches: [{ path: { value: /app } }]
      backendRefs: [{ name: v1, port: 80 }]
`);
    const next = gateway.config.generation + 1;
    config.write('routes.yaml', refused);
    await appliedAtLeast(gateway, next, 1000);
    const deadline = Date.now() + 5000;
    while (!logs.some((l) => l.includes('Envoy rejected')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(logs.find((l) => l.includes('Envoy rejected'))).toMatch(
      /generation \d+ and keeps serving the previous one/,
    );
    // Envoy's own reason, in the log and in /v1/status.
    expect(logs.find((l) => l.includes('Envoy rejected'))).toMatch(
      /keeps serving the previous one: Filesystem config update rejected: invalid repetition size: \{2000\}/,
    );
    const status = (await (await fetch(`${gateway.control.adminUrl}/v1/status`)).json()) as {
      lastEnvoyRejection: { generation: number; message: string } | null;
    };
    expect(status.lastEnvoyRejection).toMatchObject({
      generation: next,
      message: 'Filesystem config update rejected: invalid repetition size: {2000}',
    });
    // The refused routes never reach Envoy; the cluster update that came first did (xDS has no
    // transactions), so the old route answers from its rule's updated cluster — but it answers.
    const res = await fetch(`${gatewayUrl(gateway)}/app`);
    expect(res.status).toBe(200);
    const stats = await gateway.envoy.stats();
    const rejected = [...stats].filter(
      ([k, v]) => k.includes('.rds.') && k.endsWith('.update_rejected') && v > 0,
    );
    expect(rejected.length, JSON.stringify(rejected)).toBeGreaterThan(0);
  });
});
