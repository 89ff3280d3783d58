// A backend that closes an idle keep-alive connection just as Envoy sends a request on it: the
// request fails after it was sent, which Envoy never retries for a POST, so the client gets 503.
// Gateway mode closes a pooled backend connection itself once it is idle for the generated
// upstream idle timeout (GatewayConfigOptions.upstreamIdleTimeout), so a backend that keeps idle
// connections longer never closes one first. The backend's side of the race is made
// deterministic: it cuts any request that arrives on a connection idle for IDLE_CLOSE_MS.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { within } from './support/attach-stack.js';
import { curl } from './support/curl.js';
import { ConfigDir, gatewayYaml, testGatewayOptions } from './support/gateway-fixture.js';
import { type IdleClosingBackend, startIdleClosingBackend } from './support/idle-closing-backend.js';

/** The backend's keep-alive timeout. */
const IDLE_CLOSE_MS = 1000;

const routes = (backend: IdleClosingBackend): string => `apiVersion: v1
kind: Service
metadata: { name: app }
spec: { ports: [{ name: app, port: 80, targetPort: app }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-0, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ name: app, port: ${backend.port} }]
endpoints: [{ addresses: ['${backend.address}'] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: app }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: app, port: 80 }] }]
`;

describe('gateway mode: a backend that closes idle keep-alive connections', () => {
  const config = new ConfigDir();
  let backend: IdleClosingBackend | undefined;
  let gateway: LocalGateway | undefined;

  afterEach(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  afterAll(() => config.remove());

  /** One worker, so both requests share one connection pool; Envoy closes idle ones after `upstreamIdleTimeout`. */
  async function start(upstreamIdleTimeout: string): Promise<string> {
    backend = await startIdleClosingBackend('127.0.58.2', IDLE_CLOSE_MS);
    config.write('gateway.yaml', gatewayYaml());
    config.write('routes.yaml', routes(backend));
    gateway = await startLocalGateway({
      ...testGatewayOptions(config),
      envoyArgs: ['--concurrency', '1'],
      upstreamIdleTimeout,
    });
    return gateway.envoy.url();
  }

  const post = (url: string) => curl(`${url}/orders`, ['-d', 'one order']);

  /** Backend connections Envoy closed as idle. */
  const idleClosed = async (): Promise<number> => {
    const stats = await gateway!.envoy.stats('^cluster\\.backend/.*\\.upstream_cx_idle_timeout$');
    return [...stats.values()].reduce((a, b) => a + b, 0);
  };

  it('Envoy keeps an idle connection longer than the backend: a POST sent on it as the backend closes it → 503', async () => {
    const url = await start('30s');
    expect((await post(url)).status).toBe(200);
    await backend!.untilIdle();
    expect((await post(url)).status).toBe(503);
    expect({ cut: backend!.cut, connections: backend!.connections, idleClosed: await idleClosed() }).toEqual({
      cut: 1,
      connections: 1,
      idleClosed: 0,
    });
  });

  it('Envoy closes an idle connection before the backend would: the next POST takes a new one → 200', async () => {
    const url = await start('0.2s');
    expect((await post(url)).status).toBe(200);
    await within(10_000, async () => (await idleClosed()) === 1);
    await backend!.untilIdle();
    expect((await post(url)).status).toBe(200);
    expect({ cut: backend!.cut, connections: backend!.connections }).toEqual({ cut: 0, connections: 2 });
  });
});
