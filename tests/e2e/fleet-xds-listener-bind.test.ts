// A listener an Envoy cannot bind (its port taken by another process) over delta ADS: Envoy
// refuses that push (a NACK naming the listener) and keeps the listeners it could bind; the
// control plane's record of what the Envoy holds goes back to before the push, so once the
// port is free the next generation sends the listener again and the Envoy serves it.
import { type Server, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, startXdsServe, until, xdsView } from './support/fleet.js';
import { ConfigDir, freePort, serviceYaml } from './support/gateway-fixture.js';

const ENVOY_ADDRESS = '127.0.35.50';
const LISTENER = 'type.googleapis.com/envoy.config.listener.v3.Listener';

function gateway(free: number, taken: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: free, protocol: HTTP, port: ${free} }
    - { name: taken, protocol: HTTP, port: ${taken} }
`;
}

function route(paths: readonly string[]): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [${paths.map((p) => `{ path: { value: ${p} } }`).join(', ')}]
      backendRefs: [{ name: app, port: 80 }]
`;
}

describe('a listener whose port an Envoy cannot bind, over delta ADS', () => {
  const config = new ConfigDir();
  let backend: RunningBackend;
  let serve: CliProcess;
  let adminUrl = '';
  let envoys: EnvoyProcess[] = [];
  let blocker: Server | undefined;
  let freeListenerPort: number;
  let takenPort: number;
  const served = (port: number, path: string) =>
    until(
      async () =>
        (await getOnce(`http://${ENVOY_ADDRESS}:${port}${path}`).catch(() => ({ status: 0 }))).status === 200,
      15_000,
      `${ENVOY_ADDRESS}:${port}${path} → 200`,
    );

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.35.51', name: 'bind-app' });
    freeListenerPort = await freePort();
    takenPort = await freePort();
    const xdsPort = await freePort();
    // Another process holds the second listener's port on the Envoy's address (no SO_REUSEPORT).
    blocker = createServer();
    await new Promise<void>((r) =>
      blocker?.listen({ host: ENVOY_ADDRESS, port: takenPort, exclusive: true }, r),
    );
    config.write('gateway.yaml', gateway(freeListenerPort, takenPort));
    config.write('services.yaml', serviceYaml('app', [backend]));
    config.write('routes.yaml', route(['/cart']));
    ({ serve, adminUrl } = await startXdsServe(config.path, xdsPort));
    envoys = await startFleetEnvoys({
      xdsPort,
      addresses: [ENVOY_ADDRESS],
      nodePrefix: 'bind',
      protocol: 'delta',
    });
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
    await backend?.close();
    config.remove();
  });

  it('keeps the listener it could bind, and says the other was refused', async () => {
    await served(freeListenerPort, '/cart/a');
    await until(
      async () => (await xdsView(adminUrl)).envoys.some((e) => JSON.stringify(e.nacked).includes(LISTENER)),
      15_000,
      'the listener push refused',
    );
    const refusal = JSON.stringify((await xdsView(adminUrl)).envoys[0]?.nacked);
    expect(refusal).toMatch(/cannot bind .*Address already in use/);
  });

  it('sends the listener again with the next generation once the port is free', async () => {
    await new Promise((r) => blocker?.close(r));
    blocker = undefined;
    config.write('routes.yaml', route(['/cart', '/basket']));
    await served(takenPort, '/basket/a');
    await served(freeListenerPort, '/basket/a');
    await until(
      async () =>
        (await xdsView(adminUrl)).envoys.every((e) => e.nacked.length === 0 && e.inFlight === undefined),
      15_000,
      'nothing refused any more',
    );
  });
});
