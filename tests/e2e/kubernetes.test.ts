// steadfast on a cluster: a real etcd and kube-apiserver (scripts/kube-local.mjs, the Gateway
// API CRDs installed), objects applied with kubectl, `steadfast serve --kubeconfig --xds`
// running as the user the RBAC of deploy/kubernetes/rbac.yaml allows, and two real Envoys
// fed over ADS. Checks that the objects reach both Envoys; that status appears on the
// objects, only where steadfast owns it; that a change applied with kubectl converges on
// both; that a session continues from one Envoy on the other (keys from a Secret); and that
// the control plane restarted under load loses no request and rewrites no condition.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { apiServerStatusWritesTotal } from './support/kube-status-writes.js';
import {
  expectNoLossWhileRestarting,
  expectSessionContinues,
  startFleetEnvoys,
  until,
} from './support/fleet.js';
import { exchange } from './conformance/exchange.js';
import { TEST_SESSION_KEY, cookieOf, freePort } from './support/gateway-fixture.js';
import { sessionKeyId } from '../../extproc/src/provider/key-files.js';
import {
  CONTROLLER,
  appServiceYaml,
  gatewayYaml,
  sessionKeySecretYaml,
  shopRouteYaml,
} from './support/kube-objects.js';

const ENVOY_ADDRESSES = ['127.0.0.12', '127.0.0.13'] as const;

type Condition = {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
  lastTransitionTime: string;
};
type KubeObject = {
  metadata: { generation: number; resourceVersion: string; annotations?: Record<string, string> };
  status?: {
    conditions?: Condition[];
    listeners?: { name: string; attachedRoutes: number; conditions: Condition[] }[];
    parents?: { controllerName: string; parentRef: { name: string }; conditions: Condition[] }[];
  };
};

/** The shop route with retries and a cookie session on `/cart`. */
function routeYaml(extraPath?: string, backend = 'app'): string {
  const cartRule = `      retry: { attempts: 2, codes: [503] }
      sessionPersistence: { sessionName: cart-session, type: Cookie }
`;
  return shopRouteYaml({ cartRule, backend, ...(extraPath ? { extraPath } : {}) });
}

describe('steadfast on a Kubernetes API server (serve --kubeconfig --xds, two Envoys)', () => {
  let kube: LocalKube;
  let backends: RunningBackend[] = [];
  let serve: CliProcess;
  let xdsPort: number;
  let gatewayPort: number;
  const envoys: EnvoyProcess[] = [];
  const urls: string[] = [];

  const kubectl = (args: readonly string[], input?: string): string =>
    execFileSync(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);
  const get = (what: string): KubeObject =>
    JSON.parse(kubectl(['get', ...what.split(' '), '-o', 'json'])) as KubeObject;
  /** Status writes the API server has served so far (its apiserver_request_total). */
  const statusWrites = (): Promise<number> => apiServerStatusWritesTotal(kube);

  /** Until the route's status is written for its current generation. */
  const routeStatusSettled = () =>
    until(
      () => {
        const route = get('httproute shop');
        const conditions =
          route.status?.parents?.find((p) => p.controllerName === CONTROLLER)?.conditions ?? [];
        // Our entry must be there: every() of no conditions would hold at once.
        return (
          conditions.length > 0 && conditions.every((c) => c.observedGeneration === route.metadata.generation)
        );
      },
      10_000,
      'route status written for its generation',
    );
  const condition = (conditions: Condition[] | undefined, type: string) =>
    conditions?.find((c) => c.type === type);

  const startServe = async (): Promise<CliProcess> => {
    const p = new CliProcess([
      'serve',
      '--kubeconfig',
      kube.steadfastConfig,
      '--xds',
      `127.0.0.1:${xdsPort}`,
      '--session-key-secret',
      'steadfast-system/session-keys',
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
    ]);
    await p.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/);
    return p;
  };

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
    backends = await Promise.all(
      ['a', 'b'].map((n) => startEchoBackend({ address: '127.0.0.1', name: `app-${n}` })),
    );
    gatewayPort = await freePort();
    xdsPort = await freePort();
    apply(
      [
        sessionKeySecretYaml([TEST_SESSION_KEY]),
        gatewayYaml(gatewayPort),
        `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: other }
spec: { controllerName: example.com/other-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: other-gw, namespace: default }
spec:
  gatewayClassName: other
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
`,
        appServiceYaml(backends.map((b) => b.port)),
        `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: both, namespace: default }
spec:
  parentRefs: [{ name: gw }, { name: other-gw }]
  hostnames: [both.example]
  rules: [{ backendRefs: [{ name: app, port: 80 }] }]
`,
      ].join('---\n'),
    );
    apply(routeYaml());
    // Another controller has already written its entry on the route both share.
    kubectl([
      'patch',
      'httproute',
      'both',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          parents: [
            {
              parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other-gw' },
              controllerName: 'example.com/other-controller',
              conditions: [
                {
                  type: 'Accepted',
                  status: 'True',
                  reason: 'Accepted',
                  message: 'theirs',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                },
              ],
            },
          ],
        },
      }),
    ]);
    serve = await startServe();
    envoys.push(
      ...(await startFleetEnvoys({ xdsPort, addresses: ENVOY_ADDRESSES, nodePrefix: 'kube-envoy' })),
    );
    urls.push(...ENVOY_ADDRESSES.map((address) => `http://${address}:${gatewayPort}`));
  }, 240_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(backends.map((b) => b.close()));
    await kube?.stop();
  });

  it('serves the routes applied to the API server on every Envoy', async () => {
    for (const url of urls) {
      await until(
        async () => (await getOnce(`${url}/cart/a`, { host: 'shop.example' })).status === 200,
        15_000,
        `${url} serving`,
      );
      const res = await exchange(url, '/cart/a', 'shop.example');
      expect(res.status, res.body).toBe(200);
      expect((JSON.parse(res.body) as { instance: string }).instance).toMatch(/^app-[ab]$/);
    }
  });

  it('writes status on the GatewayClass, the Gateway and the route', async () => {
    await until(
      () => condition(get('httproute shop').status?.parents?.[0]?.conditions, 'ResolvedRefs') !== undefined,
      10_000,
      'route status',
    );
    const gc = get('gatewayclass steadfast');
    expect(condition(gc.status?.conditions, 'Accepted')).toMatchObject({
      status: 'True',
      observedGeneration: 1,
    });
    const gw = get('gateway gw');
    expect(condition(gw.status?.conditions, 'Accepted')).toMatchObject({
      status: 'True',
      observedGeneration: 1,
    });
    expect(condition(gw.status?.conditions, 'Programmed')?.status).toBe('True');
    expect(gw.status?.listeners?.[0]).toMatchObject({ name: 'http', attachedRoutes: 2 });
    const route = get('httproute shop');
    expect(route.status?.parents).toHaveLength(1);
    expect(route.status?.parents?.[0]).toMatchObject({
      controllerName: CONTROLLER,
      parentRef: { name: 'gw' },
    });
    for (const type of ['Accepted', 'ResolvedRefs']) {
      expect(condition(route.status?.parents?.[0]?.conditions, type)).toMatchObject({
        status: 'True',
        observedGeneration: route.metadata.generation,
      });
    }
    // steadfast holds the route without kubectl's last-applied copy; its status write keeps it.
    const lastApplied = route.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
    expect(JSON.parse(lastApplied ?? '{}')).toMatchObject({ kind: 'HTTPRoute', metadata: { name: 'shop' } });
  });

  it("leaves other controllers' objects and entries alone", async () => {
    await until(
      () => (get('httproute both').status?.parents ?? []).some((p) => p.controllerName === CONTROLLER),
      10_000,
      'our entry on the shared route',
    );
    const both = get('httproute both');
    expect(both.status?.parents?.map((p) => [p.controllerName, p.parentRef.name]).sort()).toEqual([
      ['example.com/other-controller', 'other-gw'],
      [CONTROLLER, 'gw'],
    ]);
    const theirs = both.status?.parents?.find((p) => p.controllerName !== CONTROLLER);
    expect(theirs?.conditions[0]).toMatchObject({ lastTransitionTime: '2026-01-01T00:00:00Z' });
    expect(get('gateway other-gw').status?.conditions?.some((c) => c.reason !== 'Pending')).toBeFalsy();
    expect(get('gatewayclass other').status?.conditions?.some((c) => c.reason === 'Accepted')).toBeFalsy();
    // The other class's Gateway is not served: nothing listens on its port for steadfast.
  });

  it('continues a session sealed by one Envoy on the other (keys from a Secret)', async () => {
    await expectSessionContinues(
      urls[0] as string,
      urls[1] as string,
      'shop.example',
      'cart-session',
      '/cart',
    );
  });

  it('takes a new key ring from the Secret to every Envoy: new sessions use the new key, old ones still open until it is retired', async () => {
    const NEW_KEY = Buffer.alloc(32, 7).toString('base64');
    const setKeys = (keys: readonly string[]) =>
      apply(`apiVersion: v1
kind: Secret
metadata: { name: session-keys, namespace: steadfast-system }
data:
  keys: ${Buffer.from(`${keys.join('\n')}\n`).toString('base64')}
`);
    const keyIdOf = (cookie: string) =>
      Buffer.from(cookie.slice(cookie.indexOf('=') + 1), 'base64url')
        .subarray(1, 5)
        .toString('hex');
    const idOf = (key: string) => sessionKeyId(Buffer.from(key, 'base64')).toString('hex');
    const open = async (url: string, cookie?: string) => {
      const res = await exchange(url, '/cart/k', 'shop.example', cookie ? { cookie } : {});
      expect(res.status).toBe(200);
      return {
        issued: cookieOf(res.headers['set-cookie'], 'cart-session'),
        instance: (JSON.parse(res.body) as { instance: string }).instance,
      };
    };
    const old = await open(urls[0] as string);
    expect(keyIdOf(old.issued as string)).toBe(idOf(TEST_SESSION_KEY));

    // The new key first (it seals), the old one after it (it still opens).
    setKeys([NEW_KEY, TEST_SESSION_KEY]);
    for (const url of urls) {
      await until(
        async () => keyIdOf((await open(url)).issued as string) === idOf(NEW_KEY),
        10_000,
        `${url} sealing with the new key`,
      );
      const again = await open(url, old.issued);
      expect(again.issued).toBeUndefined();
      expect(again.instance).toBe(old.instance);
    }
    expect(serve.output).toMatch(
      /session keys from Secret steadfast-system\/session-keys changed: [0-9a-f]{8}, [0-9a-f]{8} \(the first seals\); sent to every Envoy/,
    );
    const fresh = await open(urls[1] as string);

    // The old key retired: its sessions are refused (a new one is issued), the new key's continue.
    setKeys([NEW_KEY]);
    for (const url of urls) {
      await until(
        async () => (await open(url, old.issued)).issued !== undefined,
        10_000,
        `${url} refusing the old key`,
      );
      const kept = await open(url, fresh.issued);
      expect(kept.issued).toBeUndefined();
      expect(kept.instance).toBe(fresh.instance);
    }
  });

  it('brings a change applied with kubectl to both Envoys and to the status', async () => {
    const before = get('httproute shop').metadata.generation;
    apply(routeYaml('/added'));
    const took = await Promise.all(
      urls.map((url) =>
        until(
          async () => (await getOnce(`${url}/added`, { host: 'shop.example' })).status === 200,
          10_000,
          `${url}/added served`,
        ),
      ),
    );
    // From kubectl's return to both Envoys serving: the watch event, the debounce (200 ms),
    // one compile and one ADS push. How long that takes is bench:scale's to measure (its
    // Kubernetes run, "one route added → served"); the test asks only that it happens.
    console.log(
      `route change served by both Envoys after ${took.map((t) => Math.round(t)).join(' and ')} ms`,
    );
    await until(
      () =>
        condition(get('httproute shop').status?.parents?.[0]?.conditions, 'Accepted')?.observedGeneration ===
        before + 1,
      10_000,
      'observedGeneration following the change',
    );
  });

  it('reports a broken reference on the object', async () => {
    apply(routeYaml('/added', 'missing'));
    await until(
      () =>
        condition(get('httproute shop').status?.parents?.[0]?.conditions, 'ResolvedRefs')?.status === 'False',
      10_000,
      'ResolvedRefs False',
    );
    expect(condition(get('httproute shop').status?.parents?.[0]?.conditions, 'ResolvedRefs')?.reason).toBe(
      'BackendNotFound',
    );
    apply(routeYaml('/added'));
    await until(
      () =>
        condition(get('httproute shop').status?.parents?.[0]?.conditions, 'ResolvedRefs')?.status === 'True',
      10_000,
      'ResolvedRefs True again',
    );
  });

  it("says a listener's Secret of another type is of that type (InvalidCertificateRef), not missing", async () => {
    apply(`apiVersion: v1
kind: Secret
metadata: { name: not-tls, namespace: default }
type: Opaque
data: { password: ${Buffer.from('x').toString('base64')} }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: tls-gw, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - name: https
      protocol: HTTPS
      port: ${await freePort()}
      hostname: tls.example
      tls: { certificateRefs: [{ name: not-tls }] }
`);
    const resolved = () =>
      condition(get('gateway tls-gw').status?.listeners?.[0]?.conditions, 'ResolvedRefs') as
        (Condition & { message?: string }) | undefined;
    // A Secret of another type is not listed: it is looked up by name once a listener names it.
    await until(
      () =>
        /Secret default\/not-tls is of type Opaque, not kubernetes\.io\/tls/.test(resolved()?.message ?? ''),
      10_000,
      'the Secret named by its type',
    );
    expect(resolved()).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    kubectl(['delete', 'gateway', 'tls-gw']);
    kubectl(['delete', 'secret', 'not-tls']);
  });

  it('keeps serving while the API server is down, and follows it again once it is back', async () => {
    const down = startBoundedLoad({
      url: `${urls[1] as string}/cart/down`,
      headers: { host: 'shop.example' },
      ratePerSecond: 20,
      durationMs: 3000,
      maxRequests: 60,
    });
    await kube.restartApiServer(2000);
    const during = await down.done;
    expect(during.failed).toEqual([]);
    apply(routeYaml('/after-restart'));
    // The watches failed while it was down and are listed again with a growing back-off (at
    // most 30 s between tries); the change is served once they are back.
    for (const url of urls) {
      await until(
        async () => (await getOnce(`${url}/after-restart`, { host: 'shop.example' })).status === 200,
        45_000,
        `${url}/after-restart served`,
      );
    }
    expect(serve.output).toMatch(/watching \w+ failed/);
    apply(routeYaml('/added'));
  }, 90_000);

  it('loses no request while the control plane restarts, and rewrites no condition', async () => {
    await routeStatusSettled();
    const gwBefore = get('gateway gw');
    const routeBefore = get('httproute shop');
    const writesBefore = await statusWrites();
    await expectNoLossWhileRestarting(
      `${urls[0] as string}/cart/load`,
      { host: 'shop.example' },
      async () => {
        serve.kill('SIGTERM');
        await serve.exit;
        serve = await startServe();
      },
    );
    // The restarted control plane computes the same status: every condition keeps its time.
    // It says when it has checked every object it owns; only then can "nothing written" hold.
    await until(
      () => Promise.resolve(/status: every object steadfast owns is checked/.test(serve.output)),
      30_000,
      'the restarted control plane checked every status',
    );
    const gwAfter = get('gateway gw');
    expect(gwAfter.status?.conditions?.map((c) => c.lastTransitionTime)).toEqual(
      gwBefore.status?.conditions?.map((c) => c.lastTransitionTime),
    );
    // Nothing was written at all. The API server drops a write that changes nothing without a
    // new resourceVersion, so its own count of status writes is what tells.
    expect(await statusWrites()).toBe(writesBefore);
    const routeAfter = get('httproute shop');
    expect(routeAfter.status).toEqual(routeBefore.status);
    expect(routeAfter.metadata.resourceVersion).toBe(routeBefore.metadata.resourceVersion);
    expect(gwAfter.metadata.resourceVersion).toBe(gwBefore.metadata.resourceVersion);
  });

  it('stops with the reason when the API server refuses its credentials', async () => {
    const bad = join(kube.dir, 'bad.kubeconfig');
    writeFileSync(
      bad,
      execFileSync(KUBECTL, ['--kubeconfig', kube.steadfastConfig, 'config', 'view', '--raw'], {
        encoding: 'utf8',
      }).replace(/token: \S+/, 'token: not-a-token'),
    );
    const p = new CliProcess([
      'serve',
      '--kubeconfig',
      bad,
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
    ]);
    expect((await p.exit).code).not.toBe(0);
    expect(p.output).toMatch(
      /cannot read from https:\/\/127\.0\.0\.1:\d+: cannot list \w+ .*401 Unauthorized/,
    );
  });
});
