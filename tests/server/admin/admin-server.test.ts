// The admin API through fastify's inject(): no port is opened.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_ERROR_CODES } from '../../../extproc/src/server/admin/admin-errors.js';
import { buildAdminServer } from '../../../extproc/src/server/admin/admin-server.js';
import { ServiceMetrics } from '../../../extproc/src/server/metrics.js';
import type { ConfigView } from '../../../extproc/src/server/admin/config-view.js';
import { compileSnapshot } from '../../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../../support/paths.js';

describe('admin API', () => {
  it('answers /healthz', async () => {
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => null });
    const res = await app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 503 and the reason until ready', async () => {
    let reason: string | null = 'no configuration loaded yet';
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => reason });
    const before = await app.inject({ url: '/readyz' });
    expect(before.statusCode).toBe(503);
    expect(before.json()).toEqual({ status: 'not ready', reason: 'no configuration loaded yet' });
    reason = null;
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('serves steadfast_ metrics in the Prometheus text format', async () => {
    const metrics = new ServiceMetrics();
    metrics.extProcRequests.inc({ result: 'matched' });
    const app = buildAdminServer({ metrics, notReadyReason: () => null });
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE steadfast_extproc_requests_total counter');
    expect(res.body).toContain('steadfast_extproc_requests_total{result="matched"} 1');
    // Every metric is ours: nothing leaks in from the global registry.
    const names = res.body
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]);
    expect(names.every((n) => n?.startsWith('steadfast_'))).toBe(true);
  });

  it('answers 404 for unknown paths', async () => {
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => null });
    const res = await app.inject({ url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not-found' });
  });
});

describe('admin API: the configuration being served', () => {
  const routes = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 10000 }]
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [shop.example]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      retry: { attempts: 2, codes: [503] }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /api }, headers: [{ name: x-tier, value: gold }] }]
      timeouts: { request: 2s }
      backendRefs: [{ name: app, port: 80 }]
`;
  const snapshot = compileSnapshot([{ path: 'routes.yaml', text: routes }]);
  const view = (over: Partial<ConfigView> = {}): ConfigView => ({
    snapshot,
    generation: 3,
    lastFailure: undefined,
    loadedAt: new Date('2026-01-01T00:00:00Z'),
    ...over,
  });
  const app = (config?: ConfigView) =>
    buildAdminServer({
      metrics: new ServiceMetrics(),
      notReadyReason: () => null,
      ...(config ? { config } : {}),
    });

  it('lists every object with its conditions at /v1/status', async () => {
    const res = await app(view()).inject({ url: '/v1/status' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      generation: number;
      lastReloadError: unknown;
      objects: { kind: string; metadata: { name: string }; status: { parents?: unknown[] } }[];
    };
    expect(body.generation).toBe(3);
    expect(body.lastReloadError).toBeNull();
    expect(body.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      expect.arrayContaining(['Gateway/edge', 'HTTPRoute/shop', 'Service/app']),
    );
    const shop = body.objects.find((o) => o.kind === 'HTTPRoute');
    expect(JSON.stringify(shop?.status)).toContain('"type":"Accepted","status":"True"');
  });

  it('warns at /v1/status about a backend Service without ready endpoints', async () => {
    const body = (await app(view()).inject({ url: '/v1/status' })).json() as {
      objects: { kind: string; warnings: unknown[] }[];
      diagnostics: unknown[];
    };
    const shop = body.objects.find((o) => o.kind === 'HTTPRoute');
    expect(shop?.warnings).toEqual(
      [0, 1].map((i) => ({
        field: `spec.rules[${i}].backendRefs[0]`,
        line: [27, 30][i],
        code: 'no-ready-endpoints',
        message:
          'Service default/app port 80 has no endpoints: requests sent to this backend are answered 503',
      })),
    );
    expect(body.objects.find((o) => o.kind === 'Service')?.warnings).toEqual([]);
    expect(body.diagnostics).toEqual([]);
  });

  it('reports the last failed reload in /v1/status', async () => {
    const failure = {
      at: new Date('2026-01-01T00:01:00Z'),
      message: 'reload kept the previous configuration: routes.yaml:4: bad',
      errors: [{ code: 'yaml-syntax' as const, file: 'routes.yaml', line: 4, field: '', message: 'bad' }],
    };
    const body = (await app(view({ lastFailure: failure })).inject({ url: '/v1/status' })).json() as {
      lastReloadError: { at: string; message: string };
    };
    expect(body.lastReloadError).toMatchObject({ at: '2026-01-01T00:01:00.000Z', message: failure.message });
  });

  it('serves the compiled PolicyTable at /v1/policy', async () => {
    const body = (await app(view()).inject({ url: '/v1/policy' })).json() as {
      generation: number;
      table: { routes: { id: string; rules: { token: string }[] }[] };
    };
    expect(body.generation).toBe(3);
    expect(body.table).toEqual(JSON.parse(JSON.stringify(snapshot.table)));
  });

  it('resolves at /v1/resolve with method, host, path and repeated header=name:value', async () => {
    const a = app(view());
    const cart = (await a.inject({ url: '/v1/resolve?host=shop.example:80&path=/cart/1' })).json();
    expect(cart).toMatchObject({ matched: true, rule: 'httproute/default/shop/rule/0' });
    expect(cart.token).toBe(snapshot.table.routes[0]?.rules[0]?.token);
    const gold = await a.inject({
      url: '/v1/resolve?method=post&host=shop.example&path=/api/x&header=X-Tier:%20gold&header=x-other:1',
    });
    expect(gold.json()).toMatchObject({ matched: true, rule: 'httproute/default/shop/rule/1' });
    const plain = await a.inject({ url: '/v1/resolve?host=shop.example&path=/api/x' });
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).toEqual({ matched: false });
  });

  it('resolves among the routes of one Gateway port with port=N, and names the port it matched on', async () => {
    const two = compileSnapshot([
      {
        path: 'two.yaml',
        text: readFileSync(join(REPO_ROOT, 'tests/resolve/testdata/two-listeners.yaml'), 'utf8'),
      },
    ]);
    const a = app(view({ snapshot: two }));
    const on = async (q: string) =>
      (await a.inject({ url: `/v1/resolve?host=shop.example&path=/api${q}` })).json();
    expect(await on('')).toMatchObject({ matched: true, port: 8080, rule: 'httproute/default/web/rule/0' });
    expect(await on('&port=9090')).toMatchObject({
      matched: true,
      port: 9090,
      rule: 'httproute/default/rpc/rule/0',
    });
    expect(await on('&port=7070')).toEqual({ matched: false });
    const status = (await a.inject({ url: '/v1/status' })).json();
    expect(status.listeners).toEqual({ ports: [8080, 9090], problems: [] });
  });

  it('answers bad resolve queries with 400 and a coded JSON error', async () => {
    const a = app(view());
    for (const url of [
      '/v1/resolve?path=/x',
      '/v1/resolve?host=a&path=x',
      '/v1/resolve?host=a&host=b&path=/',
      '/v1/resolve?host=a&path=/&header=novalue',
      '/v1/resolve?host=a&path=/&port=http',
      '/v1/resolve?host=a&path=/&port=70000',
    ]) {
      const res = await a.inject({ url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ code: 'bad-request' });
      expect(typeof res.json().message).toBe('string');
    }
  });

  it('says why there is nothing to show before a load and without a configuration', async () => {
    const loading = await app(view({ snapshot: undefined, generation: 0 })).inject({ url: '/v1/policy' });
    expect(loading.statusCode).toBe(503);
    expect(loading.json()).toMatchObject({ code: 'not-loaded' });
    const token = await app().inject({ url: '/v1/status' });
    expect(token.statusCode).toBe(404);
    expect(token.json()).toMatchObject({ code: 'no-configuration' });
  });

  it('answers unknown endpoints with a coded JSON 404', async () => {
    const res = await app(view()).inject({ url: '/v2/nothing?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 'not-found', message: 'no such endpoint: GET /v2/nothing' });
  });

  it('documents every error code in docs/attach.md', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/attach.md'), 'utf8');
    for (const code of ADMIN_ERROR_CODES) expect(doc, code).toContain(`\`${code}\``);
  });
});
