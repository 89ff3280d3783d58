// The native filter's ticks (filter/native/host.c) ride on the scheduler of an attempt held on
// the worker, and Envoy drops a scheduled event whose filter was destroyed before it ran. A
// held attempt destroyed with a tick in flight on its scheduler must not stop the ticks for
// the worker's later held retries (they would wait for their request timeout).
//
// The window is made certain by construction, with one worker (`--concurrency 1`) and the
// test-only build that stays busy on `x-steadfast-test-trap: busy` (200 ms, 40 tick periods):
// over one HTTP/2 connection, request A's retry is held; then one write carries A's RST_STREAM
// and request B (busy). Envoy reads both frames at once: cancelling A schedules the deletion of
// its attempt (the held filter is destroyed then); B keeps the worker busy while the tick
// thread commits a tick through A's scheduler, queued behind that deletion; A's filter is
// destroyed, and the tick is dropped. The only thing left to chance is that the tick thread
// gets a CPU at some point in those 200 ms. Without the fix the next held retry waits for its
// request timeout (504); with it, it is released at its floor (200).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { filterCounter } from '../support/filter-builds.js';
import { within } from './support/attach-stack.js';
import { curl } from './support/curl.js';
import { ConfigDir, gatewayYaml, testGatewayOptions, serviceYaml } from './support/gateway-fixture.js';
import { RawH2 } from './support/raw-h2.js';
import { buildTrappingModule } from './support/trapping-module.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ticks }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /held } }]
      backendRefs: [{ name: echo, port: 80 }]
      retry: { attempts: 1, codes: [500], backoff: 300ms }
      timeouts: { request: 3s }
    - matches: [{ path: { type: PathPrefix, value: /busy } }]
      sessionPersistence: { sessionName: ticks-session, type: Cookie }
      backendRefs: [{ name: echo, port: 80 }]
`;

/** A request whose first attempt answers 500 and whose retry (held for the floor) answers 200. */
const failsOnce = (uuid: string): string => `/held?uuid=${uuid}&succeedAfter=1&responseCode=500`;

describe('a held attempt destroyed with a tick in flight (native filter)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-ticks-'));
  const config = new ConfigDir();
  let backend: RunningBackend | undefined;
  let gateway: LocalGateway;
  let url: string;
  const held = async (): Promise<number> =>
    filterCounter(await gateway.envoy.stats(), 'steadfast_retry_held_total');

  beforeAll(async () => {
    const module = await buildTrappingModule(dir);
    backend = await startEchoBackend({ address: '127.0.0.71', name: 'ticks-b1' });
    config.write('gateway.yaml', gatewayYaml());
    config.write('services.yaml', serviceYaml('echo', [backend]));
    config.write('routes.yaml', ROUTES);
    gateway = await startLocalGateway({
      ...testGatewayOptions(config),
      filterPath: module,
      envoyArgs: ['--concurrency', '1'],
    });
    url = gateway.envoy.url();
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    config.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('before: a held retry is released at its floor', async () => {
    const before = await held();
    expect((await curl(`${url}${failsOnce('ticks-before')}`)).status).toBe(200);
    expect((await held()) - before).toBe(1);
  });

  it('after: later held retries on that worker are still released at their floor', async () => {
    const port = Number(new URL(url).port);
    const h2 = await RawH2.open(port);
    try {
      const before = await held();
      h2.send(RawH2.get(1, 'ticks.example', failsOnce('ticks-aborted')));
      await within(5_000, async () => (await held()) > before, 5);
      h2.send(RawH2.cancel(1), RawH2.get(3, 'ticks.example', '/busy', { 'x-steadfast-test-trap': 'busy' }));
      await h2.untilEnded(3);
    } finally {
      h2.close();
    }
    for (const n of [1, 2]) {
      const before = await held();
      const res = await curl(`${url}${failsOnce(`ticks-after-${n}`)}`);
      expect((await held()) - before).toBe(1);
      expect(res.status).toBe(200);
    }
  }, 30_000);
});
