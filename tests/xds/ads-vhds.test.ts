// Virtual hosts apart (VHDS) on a delta stream, driven by a gRPC client that says it is Envoy
// 1.40: its route configurations come without virtual hosts, naming ADS as their source; each
// host is a VirtualHost named `<route configuration>/<hostname>` (its `name` too), sent once the
// client has answered for the route configurations; a one-host change sends that host alone
// and a host gone is removed by name. A route configuration without hosts gets one that matches
// any host with no route. A route configuration let go and asked for again gets its hosts again.
// A delta client of an older Envoy, and a state-of-the-world one, get route configurations whole.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TYPE_CLUSTER, TYPE_ROUTE_CONFIGURATION } from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { TYPE_VIRTUAL_HOST } from '../../extproc/src/envoy/xds-resources.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { decodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { RouteFileEncoder } from '../../extproc/src/xds/route-files.js';
import { AdsClient, type DeltaResponse } from '../support/ads-delta-client.js';
import { waitUntil } from '../support/wait-until.js';

const RC = TYPE_ROUTE_CONFIGURATION;
const UNSERVED = 'type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration';

function generation(routes: Record<string, readonly string[]>): GatewayResources {
  return {
    clusters: [],
    listeners: [],
    routeConfigurations: Object.entries(routes).map(([name, hosts]) => ({
      name,
      ignore_port_in_host_matching: true,
      virtual_hosts: hosts.map((h) => ({ name: h, domains: [h], routes: [] })),
    })),
    secrets: [],
    warnings: [],
  };
}

const envoyNode = (id: string, minor: number) => ({
  id,
  user_agent_name: 'envoy',
  user_agent_build_version: { version: { major_number: 1, minor_number: minor, patch: 0 } },
});
const names = (r: DeltaResponse) => (r.resources ?? []).map((x) => x.name).sort();
// A delta response's resources wrap each Any; a state-of-the-world one's are the Anys.
const decoded = (r: DeltaResponse) =>
  (r.resources ?? []).map((x) =>
    decodeAny((x.resource ?? x) as unknown as { type_url: string; value: Buffer }),
  );

describe('virtual hosts apart (VHDS) on delta streams', () => {
  let server: AdsServer | undefined;
  const clients: AdsClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    vi.restoreAllMocks();
  });

  const start = async (
    gen: { current: GatewayResources },
    options: { hostsWaitMs?: number; log?: (line: string) => void } = {},
  ) => {
    server = new AdsServer({ resources: () => gen.current, log: () => undefined, ...options });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const client = (method: 'DeltaAggregatedResources' | 'StreamAggregatedResources') => {
      const c = new AdsClient(address, server as AdsServer, method);
      clients.push(c);
      return c;
    };
    return client;
  };

  it('sends hosts apart once the route configurations are answered, then one host per change', async () => {
    const gen = { current: generation({ 'port/80': ['a.example', 'b.example'], 'port/81': [] }) };
    // The whole route configurations (state of the world's) are never put together for it.
    const whole = vi.spyOn(RouteFileEncoder.prototype, 'joined');
    const envoy = (await start(gen))('DeltaAggregatedResources');
    envoy.call.write({
      node: envoyNode('e', 40),
      type_url: RC,
      resource_names_subscribe: ['port/80', 'port/81'],
    });
    const rds = await envoy.next(RC, 0);
    for (const rc of decoded(rds)) {
      expect(rc['virtual_hosts']).toBeUndefined();
      expect(rc['vhds']).toEqual({ config_source: { ads: {}, resource_api_version: 'V3' } });
    }
    // Asked for before the route configurations are answered: nothing yet.
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST });
    // A type no gateway serves is answered at once, after anything the request before it sent.
    envoy.call.write({ type_url: UNSERVED });
    await envoy.next(UNSERVED, 0);
    expect(envoy.received.some((r) => r.type_url === TYPE_VIRTUAL_HOST)).toBe(false);
    envoy.call.write({ type_url: RC, response_nonce: rds.nonce });
    const vhds = await envoy.next(TYPE_VIRTUAL_HOST, 0);
    expect(names(vhds)).toEqual(['port/80/a.example', 'port/80/b.example', 'port/81/(none)']);
    expect(decoded(vhds).map((h) => [h['name'], h['domains']])).toEqual([
      ['port/80/a.example', ['a.example']],
      ['port/80/b.example', ['b.example']],
      ['port/81/(none)', ['*']],
    ]);
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST, response_nonce: vhds.nonce });
    await waitUntil('delivered', () => server?.status().envoys[0]?.acked[TYPE_VIRTUAL_HOST] === '1');

    // b changes, c joins port/81: those hosts, the placeholder gone; no route configuration.
    gen.current = generation({ 'port/80': ['a.example', 'b.example.org'], 'port/81': ['c.example'] });
    const seen = envoy.received.length;
    server?.update('2');
    const change = await envoy.next(TYPE_VIRTUAL_HOST, seen);
    expect(names(change)).toEqual(['port/80/b.example.org', 'port/81/c.example']);
    expect((change.removed_resources ?? []).sort()).toEqual(['port/80/b.example', 'port/81/(none)']);
    expect(envoy.received.slice(seen).map((r) => r.type_url)).toEqual([TYPE_VIRTUAL_HOST]);
    expect(whole).not.toHaveBeenCalled();
  });

  it('sends the hosts again of a route configuration asked for again, with no change between', async () => {
    const gen = { current: generation({ 'port/80': ['a.example'], 'port/81': ['c.example'] }) };
    const envoy = (await start(gen))('DeltaAggregatedResources');
    envoy.call.write({
      node: envoyNode('e', 40),
      type_url: RC,
      resource_names_subscribe: ['port/80', 'port/81'],
    });
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST });
    const rds = await envoy.next(RC, 0);
    envoy.call.write({ type_url: RC, response_nonce: rds.nonce });
    const vhds = await envoy.next(TYPE_VIRTUAL_HOST, 0);
    expect(names(vhds)).toEqual(['port/80/a.example', 'port/81/c.example']);
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST, response_nonce: vhds.nonce });
    await waitUntil('delivered', () => server?.status().envoys[0]?.acked[TYPE_VIRTUAL_HOST] === '1');

    // Its listener gone, Envoy lets port/80 go (its hosts with it); then asks for it again.
    envoy.call.write({ type_url: RC, resource_names_unsubscribe: ['port/80'] });
    const seen = envoy.received.length;
    envoy.call.write({ type_url: RC, resource_names_subscribe: ['port/80'] });
    const again = await envoy.next(RC, seen);
    expect(names(again)).toEqual(['port/80']);
    envoy.call.write({ type_url: RC, response_nonce: again.nonce });
    const hosts = await envoy.next(TYPE_VIRTUAL_HOST, seen);
    expect(names(hosts)).toEqual(['port/80/a.example']);
    expect(hosts.removed_resources ?? []).toEqual([]);
  });

  const envoyStatus = () => server?.status().envoys[0];
  /**
   * As Envoy starts: the clusters (which begin the generation's flight), the route configuration
   * its listener names asked for while they warm, both answered; no virtual hosts asked for yet.
   */
  const takeRouteConfigurations = async (envoy: AdsClient) => {
    envoy.call.write({ node: envoyNode('e', 40), type_url: TYPE_CLUSTER });
    const cds = await envoy.next(TYPE_CLUSTER, 0);
    envoy.call.write({ type_url: RC, resource_names_subscribe: ['port/80'] });
    envoy.call.write({ type_url: TYPE_CLUSTER, response_nonce: cds.nonce });
    const rds = await envoy.next(RC, 0);
    envoy.call.write({ type_url: RC, response_nonce: rds.nonce });
    await waitUntil('the route configurations answered', () => envoyStatus()?.acked[RC] === '1');
  };

  it('counts a generation delivered only once the hosts asked for after the route configurations are answered', async () => {
    const gen = { current: generation({ 'port/80': ['a.example'] }) };
    const envoy = (await start(gen))('DeltaAggregatedResources');
    await takeRouteConfigurations(envoy);
    // Envoy asks for the hosts only now that it took their route configuration: still in flight.
    expect(envoyStatus()).toMatchObject({ inFlight: '1' });
    expect(envoyStatus()?.delivered).toBeUndefined();
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST });
    const vhds = await envoy.next(TYPE_VIRTUAL_HOST, 0);
    expect(envoyStatus()).toMatchObject({ inFlight: '1' });
    envoy.call.write({ type_url: TYPE_VIRTUAL_HOST, response_nonce: vhds.nonce });
    await waitUntil('delivered', () => envoyStatus()?.delivered?.version === '1');
    const status = envoyStatus();
    expect(status?.inFlight).toBeUndefined();
    expect(status?.withoutVirtualHosts).toBeUndefined();
    expect(status?.acked[TYPE_VIRTUAL_HOST]).toBe('1');
    expect(status?.delivered?.at).toBeGreaterThanOrEqual(
      status?.pushes[TYPE_VIRTUAL_HOST]?.answeredAt ?? Infinity,
    );
  });

  it('counts the generations of a client that never asks for hosts delivered without them, after one wait', async () => {
    const gen = { current: generation({ 'port/80': ['a.example'] }) };
    const lines: string[] = [];
    const waited = () => lines.filter((l) => l.includes('has not asked for their virtual hosts')).length;
    const client = (await start(gen, { hostsWaitMs: 200, log: (l) => lines.push(l) }))(
      'DeltaAggregatedResources',
    );
    await takeRouteConfigurations(client);
    expect(envoyStatus()).toMatchObject({ inFlight: '1' });
    await waitUntil('delivered without hosts', () => envoyStatus()?.delivered?.version === '1');
    expect(envoyStatus()).toMatchObject({ withoutVirtualHosts: true });
    expect(envoyStatus()?.inFlight).toBeUndefined();
    expect(waited()).toBe(1);
    // The next generation is not held again: it lands before any second wait could end.
    gen.current = generation({ 'port/80': ['a.example', 'b.example'] });
    server?.update('2');
    await waitUntil('generation 2 delivered', () => envoyStatus()?.delivered?.version === '2');
    expect(waited()).toBe(1);
    // Asked for at last, it gets the hosts, and is an Envoy like any other.
    client.call.write({ type_url: TYPE_VIRTUAL_HOST });
    const hosts = await client.next(TYPE_VIRTUAL_HOST, 0);
    expect(names(hosts)).toEqual(['port/80/a.example', 'port/80/b.example']);
    expect(envoyStatus()?.withoutVirtualHosts).toBeUndefined();
    client.call.write({ type_url: TYPE_VIRTUAL_HOST, response_nonce: hosts.nonce });
    await waitUntil('hosts taken', () => envoyStatus()?.acked[TYPE_VIRTUAL_HOST] === '2');
  });

  it('sends route configurations whole to an older Envoy and over state of the world', async () => {
    const gen = { current: generation({ 'port/80': ['a.example'] }) };
    const client = await start(gen);
    const older = client('DeltaAggregatedResources');
    older.call.write({ node: envoyNode('old', 37), type_url: RC, resource_names_subscribe: ['port/80'] });
    const sotw = client('StreamAggregatedResources');
    sotw.call.write({ node: envoyNode('sotw', 40), type_url: RC, resource_names: ['port/80'] });
    for (const c of [older, sotw]) {
      const [rc] = decoded(await c.next(RC, 0));
      expect(rc?.['vhds']).toBeUndefined();
      expect((rc?.['virtual_hosts'] as { name: string }[]).map((h) => h.name)).toEqual(['a.example']);
    }
  });
});
