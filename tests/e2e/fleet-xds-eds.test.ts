// Endpoints apart from clusters (EDS) with real Envoys fed over delta ADS: an EndpointSlice
// change sends each Envoy the one ClusterLoadAssignment it changed — no cluster, no route
// configuration, the cluster keeps its name (counted on the control plane's side, /v1/xds
// `sent`) — a session pinned to an endpoint that stays keeps it across the change, and one
// pinned to an endpoint that left moves to a live one with a new token naming it.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { openSessionToken } from '../support/session-token.js';
import { CliProcess } from './support/cli-process.js';
import {
  type XdsView,
  startFleetEnvoys,
  startXdsServe,
  until,
  xdsSettled,
  xdsView,
} from './support/fleet.js';
import {
  ConfigDir,
  TEST_SESSION_KEY,
  freePort,
  gatewayYaml,
  serviceYaml,
} from './support/gateway-fixture.js';

const ENVOY_ADDRESSES = ['127.0.35.40', '127.0.35.41'] as const;
const ENDPOINTS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const RULE = 'httproute/default/shop/rule/0';
const KEYS = [Buffer.from(TEST_SESSION_KEY, 'base64')];

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /cart } }]
      sessionPersistence: { sessionName: x-session, type: Header }
      backendRefs: [{ name: app, port: 80 }]
`;

describe('endpoints apart from clusters (EDS) over delta ADS', () => {
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let serve: CliProcess;
  let adminUrl = '';
  let gatewayPort: number;
  const envoys: EnvoyProcess[] = [];
  const urls = () => ENVOY_ADDRESSES.map((a) => `http://${a}:${gatewayPort}`);

  const view = () => xdsView(adminUrl);
  const settled = () => xdsSettled(adminUrl, 2);
  const get = async (url: string, token?: string): Promise<Response> => {
    const r = await fetch(`${url}/cart`, { headers: token === undefined ? {} : { 'x-session': token } });
    await r.arrayBuffer();
    return r;
  };
  const instance = (r: Response): string => r.headers.get('x-backend-instance') ?? '';
  /** The endpoints (`address:port`) of app's cluster in an Envoy. */
  const appHosts = async (envoy: EnvoyProcess): Promise<Set<string>> => {
    const lines = (await (await fetch(`${envoy.adminUrl}/clusters`)).text()).split('\n');
    return new Set(
      lines.flatMap((l) => {
        const [cluster, host, stat] = l.split('::');
        return /app/.test(cluster ?? '') && stat === 'cx_active' && host ? [host] : [];
      }),
    );
  };
  const clusterNames = async (envoy: EnvoyProcess): Promise<string[]> => {
    const dump = (await (
      await fetch(`${envoy.adminUrl}/config_dump?resource=dynamic_active_clusters`)
    ).json()) as { configs: { cluster: { name: string } }[] };
    return dump.configs.map((c) => c.cluster.name).sort();
  };
  /** A session token pinned to `backend`, issued by the first Envoy (new sessions follow round robin). */
  const pinnedTo = async (backend: RunningBackend): Promise<string> => {
    let r = await get(urls()[0] as string);
    for (let i = 0; i < 30 && instance(r) !== backend.name; i++) r = await get(urls()[0] as string);
    expect(instance(r)).toBe(backend.name);
    const token = r.headers.get('x-session');
    expect(token).not.toBeNull();
    return token as string;
  };

  beforeAll(async () => {
    backends = await Promise.all(
      ['a', 'b', 'c'].map((n, i) => startEchoBackend({ address: `127.0.35.${30 + i}`, name: `eds-${n}` })),
    );
    gatewayPort = await freePort();
    const xdsPort = await freePort();
    const [a, , c] = backends as [RunningBackend, RunningBackend, RunningBackend];
    config.write('gateway.yaml', gatewayYaml(gatewayPort));
    config.write('services.yaml', serviceYaml('app', [a, c]));
    config.write('routes.yaml', ROUTE);
    ({ serve, adminUrl } = await startXdsServe(config.path, xdsPort));
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: ENVOY_ADDRESSES,
        nodePrefix: 'eds',
        protocol: 'delta',
      })),
    );
    await Promise.all(
      urls().map((url) => until(async () => (await get(url)).status === 200, 15_000, `${url}/cart → 200`)),
    );
    await settled();
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
    rmSync(config.path, { recursive: true, force: true });
  });

  it('sends an EndpointSlice change as one ClusterLoadAssignment; pinned sessions stay or fail over', async () => {
    const [a, b, c] = backends as [RunningBackend, RunningBackend, RunningBackend];
    const staying = await pinnedTo(a);
    const leaving = await pinnedTo(c);
    const namesBefore = await Promise.all(envoys.map(clusterNames));
    const before = new Map((await view()).envoys.map((e) => [e.node, e.sent]));

    // c leaves app, b joins it; a stays.
    config.write('services.yaml', serviceYaml('app', [a, b]));
    const wanted = [`${a.address}:${a.port}`, `${b.address}:${b.port}`].sort().join(' ');
    for (const envoy of envoys) {
      await until(
        async () => [...(await appHosts(envoy))].sort().join(' ') === wanted,
        15_000,
        'the new endpoints in Envoy',
      );
    }
    await settled();
    for (const e of (await view()).envoys) {
      const was = before.get(e.node) as XdsView['envoys'][number]['sent'];
      const resources = e.sent.resources - was.resources;
      const bytes = e.sent.bytes - was.bytes;
      console.log(`EndpointSlice change: ${e.node} was sent ${resources} resource(s), ${bytes} bytes`);
      // The cluster's ClusterLoadAssignment alone: no cluster, no route configuration.
      expect(resources).toBe(1);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(2000);
      expect(e.acked[ENDPOINTS]).toBeDefined();
    }
    expect(await Promise.all(envoys.map(clusterNames))).toEqual(namesBefore);

    const now = () => Math.floor(Date.now() / 1000);
    for (const url of urls()) {
      for (let i = 0; i < 20; i++) {
        // Pinned to a, which stayed: still a.
        const kept = await get(url, staying);
        expect([kept.status, instance(kept)]).toEqual([200, a.name]);
        // Pinned to c, which left (and still runs): a live endpoint, with a token naming it.
        const moved = await get(url, leaving);
        expect(moved.status).toBe(200);
        const servedBy = [a, b].find((x) => x.name === instance(moved));
        expect(servedBy, `served by "${instance(moved)}"`).toBeDefined();
        const opened = openSessionToken(moved.headers.get('x-session') ?? '', KEYS, RULE, now());
        expect(opened.ok && opened.endpoint).toBe(`${servedBy?.address}:${servedBy?.port}`);
      }
    }
  }, 60_000);
});
