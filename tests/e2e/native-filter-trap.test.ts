// A trap in the native filter never reaches Envoy. A test-only build of the filter
// (filter/assembly/testing/trap-on-demand.ts) traps when a request's x-steadfast-test-trap
// header names a way to: unreachable code (what an abort in the filter becomes), a read past
// the end of its linear memory, and unbounded recursion. Each such request is answered 503,
// as the wasm filter fails closed; Envoy serves on; the worker's instance is replaced, and the
// next request — a session opened before the trap included — is served by a fresh one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { filterCounter } from '../support/filter-builds.js';
import { curl } from './support/curl.js';
import { buildTrappingModule } from './support/trapping-module.js';
import { ConfigDir, gatewayYaml, testGatewayOptions, serviceYaml } from './support/gateway-fixture.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - sessionPersistence: { sessionName: shop-session, type: Cookie }
      backendRefs: [{ name: echo, port: 80 }]
`;

describe('a trap in the native filter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-trap-'));
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let gateway: LocalGateway;
  let url: string;
  let cookie = '';
  let backend = '';

  beforeAll(async () => {
    const module = await buildTrappingModule(dir);
    backends = await Promise.all(
      ['127.0.0.2', '127.0.0.3'].map((address, i) => startEchoBackend({ address, name: `trap-b${i + 1}` })),
    );
    config.write('gateway.yaml', gatewayYaml());
    config.write('services.yaml', serviceYaml('echo', backends));
    config.write('routes.yaml', ROUTES);
    gateway = await startLocalGateway({
      ...testGatewayOptions(config),
      filterPath: module,
    });
    url = gateway.envoy.url();
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not hit by a request that does not ask for one: a session starts', async () => {
    const res = await curl(`${url}/`);
    expect(res.status).toBe(200);
    const set = (res.headers.get('set-cookie') ?? []).find((c) => c.startsWith('shop-session='));
    expect(set).toBeDefined();
    cookie = /^shop-session=([^;]+)/.exec(set ?? '')?.[1] ?? '';
    backend = res.headers.get('x-backend-instance')?.[0] ?? '';
    expect(backend).toMatch(/^trap-b[12]$/);
  });

  it.each(['unreachable', 'out-of-bounds', 'stack'])(
    '%s: the request is answered 503, the trap is counted, and Envoy serves on',
    async (how) => {
      const before = filterCounter(await gateway.envoy.stats(), 'steadfast_native_trapped_total');
      const res = await curl(`${url}/`, ['-H', `x-steadfast-test-trap: ${how}`]);
      expect(res.status).toBe(503);
      expect(res.body).toBe('steadfast filter failed\n');
      const after = filterCounter(await gateway.envoy.stats(), 'steadfast_native_trapped_total');
      expect(after - before).toBe(1);
      const next = await curl(`${url}/`, ['-b', `shop-session=${cookie}`]);
      expect(next.status).toBe(200);
      // A fresh instance opens the session sealed before the trap: the keys are the configuration's.
      expect(next.headers.get('x-backend-instance')).toEqual([backend]);
    },
  );

  it("says in Envoy's log what trapped, and the Envoy process that started still runs", () => {
    const log = gateway.envoy.output();
    expect(log).toMatch(/the filter trapped \(unreachable executed/);
    expect(log).toMatch(/the filter trapped \(out-of-bounds memory or table access\)/);
    expect(log).toMatch(/the filter trapped \(call stack exhausted\)/);
    expect(gateway.envoy.child.exitCode).toBeNull();
    expect(gateway.envoy.child.signalCode).toBeNull();
  });
});
