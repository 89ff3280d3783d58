// Session persistence meets traffic splitting in gateway mode (GEP-1619): "an established
// session overrides traffic-split weights, including weight: 0 backends". The rule's one
// cluster keeps a weight-0 backendRef's endpoints (a locality without load), so
// stateful_session can still pin to them while new sessions follow the weights.
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

function split(blueWeight: number, greenWeight: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: app }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - sessionPersistence:
        sessionName: app-session
        type: Cookie
      backendRefs:
        - { name: blue, port: 80, weight: ${blueWeight} }
        - { name: green, port: 80, weight: ${greenWeight} }
`;
}

async function get(url: string, cookie?: string): Promise<{ instance: string; setCookie: string | null }> {
  const res = await fetch(url, cookie ? { headers: { cookie } } : {});
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return { instance: res.headers.get('x-backend-instance') ?? '', setCookie: res.headers.get('set-cookie') };
}

describe('gateway mode: sessions across weight changes', () => {
  const config = new ConfigDir();
  let blue: RunningBackend;
  let green: RunningBackend;
  let gateway: LocalGateway;

  beforeAll(async () => {
    blue = await startEchoBackend({ address: '127.0.0.2', name: 'blue' });
    green = await startEchoBackend({ address: '127.0.0.3', name: 'green' });
    config.write('gateway.yaml', gatewayYaml());
    config.write('services.yaml', serviceYaml('blue', [blue]), serviceYaml('green', [green]));
    config.write('routes.yaml', split(1, 0));
    gateway = await startTestGateway(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([blue?.close(), green?.close()]);
    config.remove();
  });

  it('keeps an established session on a backend whose weight drops to 0; new sessions follow the weights', async () => {
    const url = `${gatewayUrl(gateway)}/app`;
    const first = await get(url);
    expect(first.instance).toBe('blue');
    const cookie = /^(app-session=[^;]+)/.exec(first.setCookie ?? '')?.[1];
    expect(cookie).toBeDefined();

    const next = gateway.config.generation + 1;
    config.write('routes.yaml', split(0, 1));
    await appliedAtLeast(gateway, next);

    for (let i = 0; i < 10; i++) expect((await get(url)).instance).toBe('green');
    for (let i = 0; i < 10; i++) expect((await get(url, cookie)).instance).toBe('blue');
  });

  it('ignores a pin header sent by the client: only the filter may steer (internal_only_headers)', async () => {
    const url = `${gatewayUrl(gateway)}/app`;
    const pin = Buffer.from(`${blue.address}:${blue.port}`).toString('base64');
    for (let i = 0; i < 10; i++) {
      const res = await fetch(url, { headers: { 'x-steadfast-pin': pin } });
      await res.arrayBuffer();
      expect(res.headers.get('x-backend-instance')).toBe('green');
    }
  });
});
