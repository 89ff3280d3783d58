// Incremental (delta) ADS with real Envoys started from `envoy-config --xds --xds-protocol
// delta`: a one-route change sends each Envoy only the virtual host it changed (counted on the
// control plane's side, /v1/xds `sent`); a Service no route names any more is removed by name
// (gone from Envoy's clusters); and a control plane restarted while the configuration changed
// gives each reconnecting Envoy the full state, removing what it held that no longer exists.
// /v1/xds counts each Envoy's first generation delivered once its virtual hosts were answered.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import {
  type XdsView,
  startFleetEnvoys,
  startXdsServe,
  until,
  xdsSettled,
  xdsView,
} from './support/fleet.js';
import { ConfigDir, freePort, gatewayYaml, serviceYaml } from './support/gateway-fixture.js';

const ENVOY_ADDRESSES = ['127.0.35.20', '127.0.35.21'] as const;
const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const VIRTUAL_HOST = 'type.googleapis.com/envoy.config.route.v3.VirtualHost';

function route(name: string, path: string, service: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: ${path} } }]
      backendRefs: [{ name: ${service}, port: 80 }]
`;
}

describe('a fleet fed over delta ADS (envoy-config --xds-protocol delta)', () => {
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let serve: CliProcess;
  let adminUrl = '';
  let xdsPort: number;
  let gatewayPort: number;
  const envoys: EnvoyProcess[] = [];
  const urls = () => ENVOY_ADDRESSES.map((a) => `http://${a}:${gatewayPort}`);

  const startServe = async (): Promise<CliProcess> => {
    const started = await startXdsServe(config.path, xdsPort);
    adminUrl = started.adminUrl;
    return started.serve;
  };
  const view = () => xdsView(adminUrl);
  const settled = () => xdsSettled(adminUrl, 2);
  const servedEverywhere = (path: string, status = 200) =>
    Promise.all(
      urls().map((url) =>
        until(
          async () => (await getOnce(`${url}${path}`)).status === status,
          15_000,
          `${url}${path} → ${status}`,
        ),
      ),
    );
  const clusterNames = async (envoy: EnvoyProcess): Promise<string[]> => {
    const dump = (await (
      await fetch(`${envoy.adminUrl}/config_dump?resource=dynamic_active_clusters`)
    ).json()) as {
      configs: { cluster: { name: string } }[];
    };
    return dump.configs.map((c) => c.cluster.name).sort();
  };

  beforeAll(async () => {
    backends = await Promise.all(
      ['a', 'b'].map((n, i) => startEchoBackend({ address: `127.0.35.${3 + i}`, name: `delta-${n}` })),
    );
    gatewayPort = await freePort();
    xdsPort = await freePort();
    config.write('gateway.yaml', gatewayYaml(gatewayPort));
    config.write(
      'services.yaml',
      serviceYaml('app', [backends[0] as RunningBackend]),
      serviceYaml('other', [backends[1] as RunningBackend]),
    );
    config.write('routes.yaml', route('shop', '/cart', 'app'), route('side', '/side', 'other'));
    serve = await startServe();
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: ENVOY_ADDRESSES,
        nodePrefix: 'delta',
        protocol: 'delta',
      })),
    );
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
    rmSync(config.path, { recursive: true, force: true });
  });

  it("counts each Envoy's first generation delivered only once its virtual hosts are answered", async () => {
    await settled();
    for (const e of (await view()).envoys) {
      // No change yet: the generation it connected to, its hosts taken, and only then delivered.
      expect(e.delivered?.version).toBeDefined();
      expect(e.acked[VIRTUAL_HOST]).toBe(e.delivered?.version);
      expect(e.delivered?.at).toBeGreaterThanOrEqual(e.pushes?.[VIRTUAL_HOST]?.answeredAt ?? Infinity);
      expect(e.withoutVirtualHosts).toBeUndefined();
    }
    // Envoy asks for the hosts as it takes the route configuration: never waited for.
    expect(serve.output).not.toContain('has not asked for their virtual hosts');
  });

  it('serves the routes on every Envoy', async () => {
    await servedEverywhere('/cart/a');
    await servedEverywhere('/side/a');
    await settled();
  });

  it('sends each Envoy only the virtual host a one-route change touched', async () => {
    await settled();
    const before = new Map((await view()).envoys.map((e) => [e.node, e.sent]));
    config.write('routes.yaml', route('shop', '/basket', 'app'), route('side', '/side', 'other'));
    await servedEverywhere('/basket/a');
    await settled();
    for (const e of (await view()).envoys) {
      const b = before.get(e.node) as XdsView['envoys'][number]['sent'];
      const resources = e.sent.resources - b.resources;
      const bytes = e.sent.bytes - b.bytes;
      console.log(`one-route change: ${e.node} was sent ${resources} resource(s), ${bytes} bytes`);
      // The changed virtual host alone (VHDS): no cluster, no listener, no route configuration.
      expect(resources).toBe(1);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(5000);
    }
  });

  it('removes a cluster no route names any more, by name', async () => {
    expect((await clusterNames(envoys[0] as EnvoyProcess)).some((n) => /other/.test(n))).toBe(true);
    config.write('routes.yaml', route('shop', '/basket', 'app'));
    await servedEverywhere('/side/a', 404);
    await settled();
    for (const envoy of envoys) {
      await until(
        async () => !(await clusterNames(envoy)).some((n) => /other/.test(n)),
        15_000,
        'the unused cluster removed',
      );
    }
    expect((await view()).envoys.every((e) => e.acked[CLUSTER] !== undefined)).toBe(true);
  });

  it('gives a reconnecting Envoy the full state, and removes what it held that is gone', async () => {
    serve.kill('SIGTERM');
    await serve.exit;
    // While the control plane is away: the route to app replaced by one to other.
    config.write('routes.yaml', route('side', '/again', 'other'));
    serve = await startServe();
    await servedEverywhere('/again/a');
    await servedEverywhere('/basket/a', 404);
    await settled();
    // The new streams were sent every resource there is: clusters, listener, route configuration.
    for (const e of (await view()).envoys) expect(e.sent.resources).toBeGreaterThanOrEqual(3);
    // The cluster of app, which each Envoy held when it reconnected, is removed by name.
    for (const envoy of envoys) {
      await until(async () => !(await clusterNames(envoy)).some((n) => /app/.test(n)), 15_000, 'app removed');
      expect((await clusterNames(envoy)).some((n) => /other/.test(n))).toBe(true);
    }
  });
});
