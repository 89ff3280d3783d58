// A route configuration's `reset` switch changing on a VHDS stream (docs/fleet.md): Envoy applies
// a route configuration over the virtual hosts it holds, so before the changed head the stream
// is sent the hosts whose bridge form (every route saying its own switch) differs from what it
// holds, and the names of those the configuration no longer has; the head once it answered for
// them; and the hosts' new form once it answered for the head. A refused bridge leaves the Envoy
// with the generation it has: no head follows (asked for its route configurations again, it gets
// the bridge again first). On a new stream whose Envoy says it holds the route configuration and
// its hosts, the bridge comes first too. A generation whose head does not change sends the one
// host it changed, nothing else. A stream that never asks for virtual hosts is waited for once
// (the wait a generation's delivery has too): then its heads go without a bridge, unwaited.
import { afterEach, describe, expect, it } from 'vitest';
import {
  IDEMPOTENT_RESET_FILTER_NAME,
  TYPE_CLUSTER,
  TYPE_LISTENER,
  TYPE_FILTER_CONFIG,
  TYPE_ROUTE_CONFIGURATION,
} from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { TYPE_VIRTUAL_HOST } from '../../extproc/src/envoy/xds-resources.js';
import type { Json } from '../../extproc/src/json.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { decodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { AdsClient, type DeltaResponse } from '../support/ads-delta-client.js';
import { waitUntil } from '../support/wait-until.js';

const RC = TYPE_ROUTE_CONFIGURATION;
const VH = TYPE_VIRTUAL_HOST;
const ON = { [IDEMPOTENT_RESET_FILTER_NAME]: { '@type': TYPE_FILTER_CONFIG, config: {} } };
const OFF = { [IDEMPOTENT_RESET_FILTER_NAME]: { '@type': TYPE_FILTER_CONFIG, disabled: true } };

/** Hosts `a`, `b`, `c`: a's route wants the filter; b's and c's do not (`retrying` adds wanting ones). */
function wants(host: string, retrying: readonly string[]): boolean {
  return host === 'a' || retrying.includes(host);
}

/** A route's switch as said under the configuration's default: 'on', 'off' or 'explicit'. */
function route(host: string, wanted: boolean, mode: 'on' | 'off' | 'explicit'): Json {
  const say = mode === 'explicit' || wanted !== (mode === 'on');
  return {
    name: host,
    match: { prefix: '/' },
    direct_response: { status: 200 },
    ...(say ? { typed_per_filter_config: wanted ? ON : OFF } : {}),
  };
}

function configuration(
  retrying: readonly string[],
  mode: 'on' | 'off' | 'explicit',
  hosts: readonly string[],
): Json {
  return {
    name: 'port/80',
    ...(mode === 'on' ? { typed_per_filter_config: ON } : {}),
    virtual_hosts: hosts.map((h) => ({
      name: h,
      domains: [`${h}.example`],
      routes: [route(h, wants(h, retrying), mode)],
    })),
  };
}

/** A generation: the switch on for all when most hosts want it, and its bridge form. */
function generation(
  retrying: readonly string[],
  hosts: readonly string[] = ['a', 'b', 'c'],
): GatewayResources {
  const on = hosts.filter((h) => wants(h, retrying)).length > hosts.length / 2;
  return {
    clusters: [],
    listeners: [],
    routeConfigurations: [configuration(retrying, on ? 'on' : 'off', hosts)],
    explicitRouteConfigurations: (names) =>
      names.has('port/80') ? [configuration(retrying, 'explicit', hosts)] : [],
    secrets: [],
    warnings: [],
  };
}

const envoyNode = {
  id: 'e',
  user_agent_name: 'envoy',
  user_agent_build_version: { version: { major_number: 1, minor_number: 40, patch: 0 } },
};
/** Each pushed host's route switch: 'on', 'off', or '' when it says none. */
const said = (r: DeltaResponse) =>
  Object.fromEntries(
    (r.resources ?? []).map((x) => {
      const host = decodeAny(x.resource as { type_url: string; value: Buffer });
      const perFilter = ((host['routes'] as Json[])[0]?.['typed_per_filter_config'] ?? {}) as Json;
      const own = perFilter[IDEMPOTENT_RESET_FILTER_NAME] as { type_url: string; value: Buffer } | undefined;
      return [x.name, own === undefined ? '' : decodeAny(own)['disabled'] === true ? 'off' : 'on'];
    }),
  );
const headSwitch = (r: DeltaResponse) =>
  decodeAny((r.resources ?? [])[0]?.resource as { type_url: string; value: Buffer })[
    'typed_per_filter_config'
  ] !== undefined;

describe('a route configuration switch changing on a VHDS stream', () => {
  let server: AdsServer | undefined;
  const clients: AdsClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
  });

  const start = async (
    gen: { current: GatewayResources },
    options: { hostsWaitMs?: number; log?: (line: string) => void } = {},
  ) => {
    server = new AdsServer({ resources: () => gen.current, log: () => undefined, ...options });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    return () => {
      const c = new AdsClient(address, server as AdsServer, 'DeltaAggregatedResources');
      clients.push(c);
      return c;
    };
  };

  /** As a reconnecting Envoy says it holds the route configuration and its three hosts. */
  const saysItHolds = (envoy: AdsClient) => {
    envoy.call.write({
      type_url: RC,
      resource_names_subscribe: ['port/80'],
      initial_resource_versions: { 'port/80': 'v' },
    });
    envoy.call.write({
      type_url: VH,
      initial_resource_versions: { 'port/80/a': 'v', 'port/80/b': 'v', 'port/80/c': 'v' },
    });
  };

  /** A client holding generation 1: the route configurations `names` answered, then their hosts. */
  const holding = async (client: () => AdsClient, names: readonly string[] = ['port/80']) => {
    const envoy = client();
    envoy.call.write({ node: envoyNode, type_url: RC, resource_names_subscribe: [...names] });
    envoy.call.write({ type_url: VH });
    const rds = await envoy.next(RC, 0);
    envoy.call.write({ type_url: RC, response_nonce: rds.nonce });
    const vhds = await envoy.next(VH, 0);
    envoy.call.write({ type_url: VH, response_nonce: vhds.nonce });
    await waitUntil('delivered', () => server?.status().envoys[0]?.acked[VH] === '1');
    return { envoy, rds, vhds };
  };

  it('sends the bridge, then the head, then the hosts, each after the answer to the one before', async () => {
    const gen = { current: generation([]) };
    const { envoy, rds, vhds } = await holding(await start(gen));
    expect(headSwitch(rds)).toBe(false);
    expect(said(vhds)).toEqual({ 'port/80/a': 'on', 'port/80/b': '', 'port/80/c': '' });

    // b wants it too: most do, the head switches it on; c must then say off.
    gen.current = generation(['b']);
    const seen = envoy.received.length;
    server?.update('2');
    const bridge = await envoy.next(VH, seen);
    // Only what differs from what it holds: a said on already.
    expect(said(bridge)).toEqual({ 'port/80/b': 'on', 'port/80/c': 'off' });
    expect(bridge.removed_resources ?? []).toEqual([]);
    // No head until it answers (the server would have sent it with the bridge).
    expect(server?.status().envoys[0]?.pushes[RC]?.version).toBe('1');
    envoy.call.write({ type_url: VH, response_nonce: bridge.nonce });
    const head = await envoy.next(RC, seen);
    expect(headSwitch(head)).toBe(true);
    expect(envoy.received.slice(seen).map((r) => r.type_url)).toEqual([VH, RC]);
    envoy.call.write({ type_url: RC, response_nonce: head.nonce });
    const after = envoy.received.length;
    const hosts = await envoy.next(VH, after);
    expect(said(hosts)).toEqual({ 'port/80/a': '', 'port/80/b': '' });
    envoy.call.write({ type_url: VH, response_nonce: hosts.nonce });
    await waitUntil('delivered', () => server?.status().envoys[0]?.inFlight === undefined);

    // A change that keeps the head: the one host, no bridge.
    gen.current = generation(['b', 'c']);
    const next = envoy.received.length;
    server?.update('3');
    const one = await envoy.next(VH, next);
    expect(said(one)).toEqual({ 'port/80/c': '' });
    expect(envoy.received.slice(next).map((r) => r.type_url)).toEqual([VH]);
  });

  it('makes the bridge form of the route configurations whose head changes, no other', async () => {
    const asked: string[][] = [];
    /** Generation `retrying` on port/80, and port/81 of one host that never changes. */
    const twoPorts = (retrying: readonly string[]): GatewayResources => {
      const g = generation(retrying);
      const other = { ...configuration([], 'off', ['z']), name: 'port/81' };
      return {
        ...g,
        routeConfigurations: [...g.routeConfigurations, other],
        explicitRouteConfigurations: (names) => {
          asked.push([...names]);
          return g.explicitRouteConfigurations?.(names) ?? [];
        },
      };
    };
    const gen = { current: twoPorts([]) };
    const { envoy } = await holding(await start(gen), ['port/80', 'port/81']);
    gen.current = twoPorts(['b']);
    const seen = envoy.received.length;
    server?.update('2');
    expect(said(await envoy.next(VH, seen))).toEqual({ 'port/80/b': 'on', 'port/80/c': 'off' });
    expect(asked).toEqual([['port/80']]);
  });

  it('a tip by deleting hosts: the bridge removes them before the head', async () => {
    const gen = { current: generation(['b'], ['a', 'b', 'c', 'd', 'e']) };
    const { envoy, rds } = await holding(await start(gen));
    expect(headSwitch(rds)).toBe(false);
    // d and e go: most of those left want the filter, the head switches it on.
    gen.current = generation(['b'], ['a', 'b', 'c']);
    const seen = envoy.received.length;
    server?.update('2');
    const bridge = await envoy.next(VH, seen);
    expect(said(bridge)).toEqual({ 'port/80/c': 'off' });
    expect((bridge.removed_resources ?? []).sort()).toEqual(['port/80/d', 'port/80/e']);
    expect(server?.status().envoys[0]?.pushes[RC]?.version).toBe('1');
    envoy.call.write({ type_url: VH, response_nonce: bridge.nonce });
    const head = await envoy.next(RC, seen);
    expect(headSwitch(head)).toBe(true);
    envoy.call.write({ type_url: RC, response_nonce: head.nonce });
    const hosts = await envoy.next(VH, envoy.received.indexOf(head));
    expect(said(hosts)).toEqual({ 'port/80/a': '', 'port/80/b': '' });
    expect(hosts.removed_resources ?? []).toEqual([]);
  });

  it('a refused bridge: no head follows, the Envoy keeps the generation it has', async () => {
    const gen = { current: generation([]) };
    const { envoy } = await holding(await start(gen));
    gen.current = generation(['b']);
    const seen = envoy.received.length;
    server?.update('2');
    const bridge = await envoy.next(VH, seen);
    envoy.call.write({ type_url: VH, response_nonce: bridge.nonce, error_detail: { message: 'no' } });
    await waitUntil('landed', () => server?.status().envoys[0]?.inFlight === undefined);
    expect(server?.status().envoys[0]?.pushes[RC]?.version).toBe('1');
    expect(server?.status().envoys[0]?.acked[RC]).toBe('1');
    // Asked for its route configurations again (another name): the bridge again, not the head.
    const again = envoy.received.length;
    envoy.call.write({ type_url: RC, resource_names_subscribe: ['port/99'] });
    const bridgeAgain = await envoy.next(VH, again);
    expect(said(bridgeAgain)).toEqual({ 'port/80/b': 'on', 'port/80/c': 'off' });
    expect(server?.status().envoys[0]?.pushes[RC]?.version).toBe('1');
    envoy.call.write({ type_url: VH, response_nonce: bridgeAgain.nonce });
    const head = await envoy.next(RC, again);
    expect(headSwitch(head)).toBe(true);
  });

  it('a route configuration it holds asked for after the clusters were answered: the bridge first', async () => {
    const gen = { current: generation(['b']) };
    const client = await start(gen);
    const envoy = client();
    envoy.call.write({ node: envoyNode, type_url: TYPE_CLUSTER });
    envoy.call.write({ type_url: TYPE_LISTENER });
    const cds = await envoy.next(TYPE_CLUSTER, 0);
    envoy.call.write({ type_url: TYPE_CLUSTER, response_nonce: cds.nonce });
    // The listeners go out (unanswered: the generation is on its way); then what it holds.
    await envoy.next(TYPE_LISTENER, 0);
    const seen = envoy.received.length;
    saysItHolds(envoy);
    const bridge = await envoy.next(VH, seen);
    expect(said(bridge)).toEqual({ 'port/80/a': 'on', 'port/80/b': 'on', 'port/80/c': 'off' });
    expect(server?.status().envoys[0]?.pushes[RC]).toBeUndefined();
    envoy.call.write({ type_url: VH, response_nonce: bridge.nonce });
    expect(headSwitch(await envoy.next(RC, seen))).toBe(true);
  });

  it('a new stream whose Envoy holds the route configuration gets the bridge before the head', async () => {
    const gen = { current: generation(['b']) };
    const client = await start(gen);
    const envoy = client();
    // As Envoy reconnects: clusters first, then what it holds.
    envoy.call.write({ node: envoyNode, type_url: TYPE_CLUSTER });
    const cds = await envoy.next(TYPE_CLUSTER, 0);
    saysItHolds(envoy);
    envoy.call.write({ type_url: TYPE_CLUSTER, response_nonce: cds.nonce });
    const bridge = await envoy.next(VH, 1);
    expect(said(bridge)).toEqual({ 'port/80/a': 'on', 'port/80/b': 'on', 'port/80/c': 'off' });
    expect(envoy.received.slice(1).map((r) => r.type_url)).toEqual([VH]);
    envoy.call.write({ type_url: VH, response_nonce: bridge.nonce });
    const head = await envoy.next(RC, 1);
    expect(headSwitch(head)).toBe(true);
    envoy.call.write({ type_url: RC, response_nonce: head.nonce });
    const hosts = await envoy.next(VH, envoy.received.indexOf(head));
    expect(said(hosts)).toEqual({ 'port/80/a': '', 'port/80/b': '' });
  });

  it('a stream that never asks for virtual hosts: waited for once, then its heads go without a bridge', async () => {
    const lines: string[] = [];
    const waited = () => lines.filter((l) => l.includes('has not asked for their virtual hosts')).length;
    const gen = { current: generation([]) };
    const client = await start(gen, { hostsWaitMs: 200, log: (l) => lines.push(l) });
    const envoy = client();
    // It says it holds the route configuration (another head) and never asks for hosts.
    envoy.call.write({
      node: envoyNode,
      type_url: RC,
      resource_names_subscribe: ['port/80'],
      initial_resource_versions: { 'port/80': 'v' },
    });
    const head = await envoy.next(RC, 0);
    expect(headSwitch(head)).toBe(false);
    expect(waited()).toBe(1);
    expect(lines.find((l) => l.includes('has not asked'))).toMatch(/the heads go without their bridge/);
    expect(envoy.received.map((r) => r.type_url)).toEqual([RC]);
    envoy.call.write({ type_url: RC, response_nonce: head.nonce });
    const status = () => server?.status().envoys[0];
    await waitUntil('delivered', () => status()?.delivered?.version === '1');
    expect(status()?.withoutVirtualHosts).toBe(true);

    // A tip: the head at once, no second wait (the bridge's and the delivery's wait are one).
    gen.current = generation(['b']);
    const seen = envoy.received.length;
    server?.update('2');
    const tipped = await envoy.next(RC, seen);
    expect(headSwitch(tipped)).toBe(true);
    envoy.call.write({ type_url: RC, response_nonce: tipped.nonce });
    await waitUntil('generation 2 delivered', () => status()?.delivered?.version === '2');
    expect(waited()).toBe(1);
    expect(envoy.received.map((r) => r.type_url)).toEqual([RC, RC]);
  });
});
