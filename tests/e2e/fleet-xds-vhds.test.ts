// Virtual hosts apart from their route configuration (VHDS) on a delta ADS stream, with real
// Envoys: one fed over delta ADS, one over state of the world, routes each with a hostname of
// its own on one plain-HTTP listener. A one-route change (edit, add, delete) sends the delta
// Envoy the one VirtualHost it changed, or its name (/v1/xds `sent`), and the state-of-the-world
// Envoy the whole route configuration; both serve the change, and the other routes go on. A
// control plane restarted while a route was deleted removes that host from the reconnecting
// Envoy by name. On an HTTPS port of two listeners (a route configuration per SNI name) the
// same holds, and a request whose Host belongs to the other listener is still answered 421, one
// for a route of the other listener 404. A Gateway removed, once the delta Envoy has let its
// route configuration go, and added back unchanged is served again (200) on both.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import {
  createDevAuthority,
  issueDevCertificate,
  tlsSecretYaml,
} from '../../extproc/src/local/dev-certificates.js';
import { exchange } from './conformance/exchange.js';
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

const DELTA = '127.0.36.20';
const SOTW = '127.0.36.21';
const ROUTES = 20;
const VIRTUAL_HOST = 'type.googleapis.com/envoy.config.route.v3.VirtualHost';
const ROUTE_CONFIGURATION = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

function route(i: number, path = `/r/${i}`): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: route-${i} }
spec:
  parentRefs: [{ name: gw }]
  hostnames: ['h-${i}.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
`;
}

/** Two HTTPS listeners sharing a port, one hostname each. */
function tlsGatewayYaml(port: number): string {
  const listener = (n: string) =>
    `    - { name: ${n}, protocol: HTTPS, port: ${port}, hostname: ${n}.vhds.example, tls: { certificateRefs: [{ name: vhds-cert }] } }`;
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: tls-gw }
spec:
  gatewayClassName: steadfast
  listeners:
${listener('a')}
${listener('b')}
`;
}

/** A Gateway of its own port, with one route. */
function soloGatewayYaml(port: number): string {
  return `${gatewayYaml(port).replace('name: gw', 'name: solo-gw')}---
${soloRouteYaml}`;
}

const soloRouteYaml = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: solo }
spec:
  parentRefs: [{ name: solo-gw }]
  hostnames: [solo.example]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /solo } }]
      backendRefs: [{ name: app, port: 80 }]
`;

/** The route configuration names an Envoy holds. */
async function routeConfigurationNames(envoy: EnvoyProcess): Promise<string[]> {
  const dump = (await (
    await fetch(`${envoy.adminUrl}/config_dump?resource=dynamic_route_configs`)
  ).json()) as {
    configs?: { route_config?: { name?: string } }[];
  };
  return (dump.configs ?? []).map((c) => c.route_config?.name ?? '').sort();
}

/** A route on one HTTPS listener only. */
function tlsRoute(listener: string, path: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: tls-${listener} }
spec:
  parentRefs: [{ name: tls-gw, sectionName: ${listener} }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
`;
}

describe('virtual hosts apart (VHDS) on delta ADS streams', () => {
  const config = new ConfigDir();
  let backend: RunningBackend;
  let serve: CliProcess;
  let adminUrl = '';
  let xdsPort: number;
  let gatewayPort: number;
  let httpsPort: number;
  let emptyPort: number;
  let soloPort: number;
  let ca = '';
  const envoys: EnvoyProcess[] = [];
  let routes = new Map<number, string>();

  const writeRoutes = () => config.write('routes.yaml', ...[...routes.values()]);
  const startServe = async (): Promise<CliProcess> => {
    const started = await startXdsServe(config.path, xdsPort);
    adminUrl = started.adminUrl;
    return started.serve;
  };
  const status = (address: string, i: number, path: string) =>
    getOnce(`http://${address}:${gatewayPort}${path}`, { host: `h-${i}.example` }).then((r) => r.status);
  const servedOnBoth = (i: number, path: string, expected = 200) =>
    Promise.all(
      [DELTA, SOTW].map((a) =>
        until(
          async () => (await status(a, i, path)) === expected,
          15_000,
          `${a} h-${i}${path} → ${expected}`,
        ),
      ),
    );
  const sentSince = (before: XdsView, after: XdsView, node: string) => {
    const [b, a] = [before, after].map((v) => v.envoys.find((e) => e.node === node)?.sent);
    return { resources: (a?.resources ?? 0) - (b?.resources ?? 0), bytes: (a?.bytes ?? 0) - (b?.bytes ?? 0) };
  };
  /** Applies `change`, waits until `served` holds on both Envoys and both settled; what each was sent. */
  const change = async (apply: () => void, served: () => Promise<unknown>) => {
    await xdsSettled(adminUrl, 2);
    const before = await xdsView(adminUrl);
    apply();
    await served();
    await xdsSettled(adminUrl, 2);
    const after = await xdsView(adminUrl);
    return { delta: sentSince(before, after, 'vhds-0'), sotw: sentSince(before, after, 'whole-0') };
  };

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.36.3', name: 'vhds-app' });
    gatewayPort = await freePort();
    xdsPort = await freePort();
    httpsPort = await freePort();
    const authority = createDevAuthority('fleet-xds-vhds test CA');
    ca = authority.certificate;
    const pair = issueDevCertificate(authority, {
      commonName: 'a.vhds.example',
      dnsNames: ['a.vhds.example', 'b.vhds.example'],
    });
    emptyPort = await freePort();
    soloPort = await freePort();
    config.write(
      'gateway.yaml',
      gatewayYaml(gatewayPort),
      tlsGatewayYaml(httpsPort),
      // A port no route attaches to: its route configuration has no virtual host.
      gatewayYaml(emptyPort).replace('name: gw', 'name: empty-gw'),
    );
    config.write('cert.yaml', tlsSecretYaml('vhds-cert', 'default', pair, 'made by the test'));
    config.write('solo.yaml', soloGatewayYaml(soloPort));
    config.write('tls-routes.yaml', tlsRoute('a', '/a'), tlsRoute('b', '/b'));
    config.write('services.yaml', serviceYaml('app', [backend]));
    routes = new Map(Array.from({ length: ROUTES }, (_, i) => [i, route(i)]));
    writeRoutes();
    serve = await startServe();
    // A listener removed is drained for 1 s (not 600): then Envoy lets its route configuration go.
    const fleet = { xdsPort, envoyArgs: ['--drain-time-s', '1'] } as const;
    envoys.push(
      ...(await startFleetEnvoys({ ...fleet, addresses: [DELTA], nodePrefix: 'vhds', protocol: 'delta' })),
      ...(await startFleetEnvoys({ ...fleet, addresses: [SOTW], nodePrefix: 'whole', protocol: 'sotw' })),
    );
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await backend?.close();
    config.remove();
    rmSync(config.path, { recursive: true, force: true });
  });

  it('serves every host on both Envoys; only the delta Envoy takes virtual hosts apart', async () => {
    await servedOnBoth(0, '/r/0/a');
    await servedOnBoth(ROUTES - 1, `/r/${ROUTES - 1}/a`);
    await xdsSettled(adminUrl, 2);
    const view = await xdsView(adminUrl);
    const acked = (node: string) => view.envoys.find((e) => e.node === node)?.acked ?? {};
    expect(acked('vhds-0')[VIRTUAL_HOST]).toBeDefined();
    expect(acked('whole-0')[VIRTUAL_HOST]).toBeUndefined();
    expect(acked('whole-0')[ROUTE_CONFIGURATION]).toBeDefined();
    // A host no route has still finds no route on either.
    for (const a of [DELTA, SOTW]) expect(await status(a, ROUTES + 5, '/r/0/a')).toBe(404);
  });

  it('answers 404 on a port no route attached to, on both Envoys', async () => {
    for (const a of [DELTA, SOTW]) {
      await until(
        async () => (await getOnce(`http://${a}:${emptyPort}/r/0/a`, { host: 'h-0.example' })).status === 404,
        15_000,
        `${a}:${emptyPort} → 404`,
      );
    }
  });

  it('sends an edited route as its one virtual host, and the whole table over state of the world', async () => {
    routes.set(3, route(3, '/edited'));
    const sent = await change(writeRoutes, () => servedOnBoth(3, '/edited/a'));
    console.log(`edit: delta ${JSON.stringify(sent.delta)}, state of the world ${JSON.stringify(sent.sotw)}`);
    expect(sent.delta.resources).toBe(1);
    expect(sent.delta.bytes).toBeLessThan(1000);
    expect(sent.sotw.resources).toBeGreaterThanOrEqual(1);
    expect(sent.sotw.bytes).toBeGreaterThan(sent.delta.bytes * 10);
    await servedOnBoth(3, '/r/3/a', 404);
    await servedOnBoth(4, '/r/4/a');
  });

  it('sends an added route as its one virtual host', async () => {
    routes.set(ROUTES, route(ROUTES));
    const sent = await change(writeRoutes, () => servedOnBoth(ROUTES, `/r/${ROUTES}/a`));
    expect(sent.delta.resources).toBe(1);
    expect(sent.delta.bytes).toBeLessThan(1000);
    await servedOnBoth(5, '/r/5/a');
  });

  it('removes a deleted route by name, sending no resource', async () => {
    routes.delete(6);
    const sent = await change(writeRoutes, () => servedOnBoth(6, '/r/6/a', 404));
    expect(sent.delta).toEqual({ resources: 0, bytes: 0 });
    await servedOnBoth(7, '/r/7/a');
  });

  it('keeps the listeners of an HTTPS port apart (421, 404) and sends one changed host there too', async () => {
    const https = (address: string, sni: string, host: string, path: string) =>
      exchange(`https://${address}:${httpsPort}`, path, `${host}.vhds.example`, {}, 'GET', {
        ca,
        serverName: `${sni}.vhds.example`,
      }).then((r) => r.status);
    const expectOnBoth = (sni: string, host: string, path: string, expected: number) =>
      Promise.all(
        [DELTA, SOTW].map((a) =>
          until(
            async () => (await https(a, sni, host, path)) === expected,
            15_000,
            `${a} ${sni}/${host}${path}`,
          ),
        ),
      );
    await expectOnBoth('a', 'a', '/a', 200);
    await expectOnBoth('a', 'b', '/b', 421);
    await expectOnBoth('b', 'b', '/a', 404);
    await expectOnBoth('b', 'b', '/b', 200);
    const sent = await change(
      () => config.write('tls-routes.yaml', tlsRoute('a', '/a2'), tlsRoute('b', '/b')),
      () => expectOnBoth('a', 'a', '/a2', 200),
    );
    console.log(
      `HTTPS edit: delta ${JSON.stringify(sent.delta)}, state of the world ${JSON.stringify(sent.sotw)}`,
    );
    expect(sent.delta.resources).toBe(1);
    expect(sent.delta.bytes).toBeLessThan(1000);
    await expectOnBoth('a', 'a', '/a', 404);
    await expectOnBoth('b', 'a', '/a2', 421);
    await expectOnBoth('b', 'b', '/b', 200);
  });

  it('serves a port again whose listener was removed, let go by the Envoy, and added back unchanged', async () => {
    const solo = (address: string) =>
      getOnce(`http://${address}:${soloPort}/solo/a`, { host: 'solo.example' }).then(
        (r) => r.status,
        () => 0,
      );
    const soloOnBoth = (expected: number) =>
      Promise.all(
        [DELTA, SOTW].map((a) =>
          until(async () => (await solo(a)) === expected, 15_000, `${a} solo → ${expected || 'refused'}`),
        ),
      );
    await soloOnBoth(200);
    const held = await routeConfigurationNames(envoys[0] as EnvoyProcess);
    // The Gateway gone, its listener goes (0: the connection is refused); drained (1 s), the
    // delta Envoy lets its route configuration, and with it the virtual hosts, go.
    config.write('solo.yaml', soloRouteYaml);
    await soloOnBoth(0);
    await until(
      async () => {
        const now = await routeConfigurationNames(envoys[0] as EnvoyProcess);
        return held.some((n) => !now.includes(n));
      },
      15_000,
      'the delta Envoy lets the route configuration of the removed listener go',
    );
    config.write('solo.yaml', soloGatewayYaml(soloPort));
    await soloOnBoth(200);
    await xdsSettled(adminUrl, 2);
  });

  it('removes from a reconnecting Envoy the host deleted while the control plane was away', async () => {
    serve.kill('SIGTERM');
    await serve.exit;
    routes.delete(8);
    writeRoutes();
    serve = await startServe();
    await servedOnBoth(8, '/r/8/a', 404);
    await servedOnBoth(9, '/r/9/a');
    await servedOnBoth(3, '/edited/a');
    await xdsSettled(adminUrl, 2);
  });
});
