// Status writes at a real API server (scripts/kube-local.mjs), counted by the API server itself:
// under a low --kube-api-qps the status writes queue up behind the rate limit while the Lease is
// renewed on time (its requests are not counted); a restart with nothing changed writes nothing;
// a change to one route writes that route only, and a new route its Gateway too (its listener's
// attachedRoutes moved).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { CliProcess } from './support/cli-process.js';
import { until } from './support/fleet.js';
import { freePort } from './support/gateway-fixture.js';
import { apiServerStatusWrites } from './support/kube-status-writes.js';
import { CONTROLLER, appServiceYaml, gatewayYaml } from './support/kube-objects.js';

const ROUTES = 20;

const routeYaml = (i: number, path = `/r/${i}`): string => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: route-${i}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [svc-${i}.example]
  rules: [{ matches: [{ path: { type: PathPrefix, value: '${path}' } }], backendRefs: [{ name: app, port: 80 }] }]
`;

type Route = {
  metadata: { generation: number };
  status?: { parents?: { controllerName: string; conditions: { observedGeneration?: number }[] }[] };
};

describe('status writes on a real API server: paced, never starving the Lease, only what changed', () => {
  let kube: LocalKube;
  let serve: CliProcess | undefined;
  let adminUrl = '';

  const kubectl = (args: readonly string[], input?: string): string =>
    execFileSync(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1] ?? NaN);
  };
  const startServe = async (...flags: string[]): Promise<CliProcess> => {
    const p = new CliProcess([
      'serve',
      '--kubeconfig',
      kube.steadfastConfig,
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
      ...flags,
    ]);
    adminUrl = (await p.waitFor(/ready; ext_proc on \S+; admin on (\S+)/))[1] as string;
    return p;
  };
  const stopServe = async (): Promise<void> => {
    serve?.kill('SIGTERM');
    await serve?.exit;
    serve = undefined;
  };
  /** Until route-i's status follows its generation and nothing waits to be checked or written. */
  const settled = (i: number) =>
    until(
      async () => {
        const r = JSON.parse(kubectl(['get', 'httproute', `route-${i}`, '-o', 'json'])) as Route;
        const ours = r.status?.parents?.find((p) => p.controllerName === CONTROLLER)?.conditions ?? [];
        const follows = ours.length > 0 && ours.every((c) => c.observedGeneration === r.metadata.generation);
        return follows && (await metric('steadfast_kubernetes_status_pending')) === 0;
      },
      20_000,
      `route-${i}'s status written and nothing pending`,
    );
  /** The API server's status writes per resource since `before`. */
  const writtenSince = async (before: Record<string, number>) => {
    const now = await apiServerStatusWrites(kube);
    const delta = (r: string) => (now[r] ?? 0) - (before[r] ?? 0);
    return {
      httproutes: delta('httproutes'),
      gateways: delta('gateways'),
      gatewayclasses: delta('gatewayclasses'),
    };
  };

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
    const port = await freePort();
    kubectl(
      ['apply', '-f', '-'],
      [
        gatewayYaml(port),
        appServiceYaml([port]),
        ...Array.from({ length: ROUTES }, (_, i) => routeYaml(i)),
      ].join('---\n'),
    );
  }, 240_000);

  afterAll(async () => {
    await stopServe();
    await kube?.stop();
  });

  it('keeps the Lease while status writes wait on --kube-api-qps 1', async () => {
    // The burst covers the start's lists and watches (reads: they never wait) and a few writes;
    // the rest go one a second. Were the Lease counted, each renewal would wait behind the 8
    // writes in flight (8 s) and miss its 3 s renew deadline.
    serve = await startServe(
      '--kube-api-qps',
      '1',
      '--kube-api-burst',
      '40',
      '--lease-duration',
      '4s',
      '--lease-renew-deadline',
      '3s',
      '--lease-retry-period',
      '1s',
    );
    const p = serve;
    await until(
      async () => (await metric('steadfast_kubernetes_status_writes_total')) > 0,
      30_000,
      'a write',
    );
    let paced = false;
    await until(
      async () => {
        expect(await metric('steadfast_kubernetes_leader')).toBe(1);
        // Writes are waiting on the limit: the backlog is visible while they go out.
        if ((await metric('steadfast_kubernetes_status_pending')) > 0) paced = true;
        return (await metric('steadfast_kubernetes_status_writes_total')) >= ROUTES;
      },
      90_000,
      `${ROUTES} status writes at 1 a second`,
    );
    expect(paced).toBe(true);
    expect(p.output).not.toMatch(/stopped writing status/);
    await stopServe();
  }, 150_000);

  it('writes nothing when restarted with nothing changed', async () => {
    serve = await startServe();
    await serve.waitFor(/status: every object steadfast owns is checked/);
    await settled(ROUTES - 1);
    await stopServe();
    const before = await apiServerStatusWrites(kube);
    serve = await startServe();
    await serve.waitFor(/status: every object steadfast owns is checked \(0 written\)/);
    expect(await writtenSince(before)).toEqual({ httproutes: 0, gateways: 0, gatewayclasses: 0 });
  }, 120_000);

  it('writes one changed route only, and the Gateway too when its listener counts a new route', async () => {
    let before = await apiServerStatusWrites(kube);
    kubectl(['apply', '-f', '-'], routeYaml(3, '/edited'));
    await settled(3);
    // The route's observedGeneration moved; the Gateway's status (attachedRoutes 20) did not.
    expect(await writtenSince(before)).toEqual({ httproutes: 1, gateways: 0, gatewayclasses: 0 });

    before = await apiServerStatusWrites(kube);
    kubectl(['apply', '-f', '-'], routeYaml(ROUTES));
    await settled(ROUTES);
    expect(await writtenSince(before)).toEqual({ httproutes: 1, gateways: 1, gatewayclasses: 0 });
    const gw = JSON.parse(kubectl(['get', 'gateway', 'gw', '-o', 'json'])) as {
      status: { listeners: { attachedRoutes: number }[] };
    };
    expect(gw.status.listeners[0]?.attachedRoutes).toBe(ROUTES + 1);
  }, 60_000);
});
