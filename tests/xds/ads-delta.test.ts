// Incremental (delta) ADS, driven by a gRPC client in an Envoy's place: the first push of a
// type carries everything asked for; a change carries only the resources whose content
// changed and the names of those gone (a cluster once the routes that named it are replaced);
// a refused push is sent again with the next change;
// names no longer asked for are forgotten; and on the same change a state-of-the-world stream
// is sent every resource of the type. The client does not say it is an Envoy, so its route
// configurations come whole (tests/xds/ads-vhds.test.ts has the virtual hosts apart).
import { afterEach, describe, expect, it } from 'vitest';
import { TYPE_CLUSTER, TYPE_ROUTE_CONFIGURATION } from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { waitUntil } from '../support/wait-until.js';
import { AdsClient as Client, type DeltaResponse } from '../support/ads-delta-client.js';

function generation(clusters: string[], routes: Record<string, string>): GatewayResources {
  return {
    clusters: clusters.map((name) => ({ name, type: 'STATIC', connect_timeout: '1s' })),
    listeners: [],
    routeConfigurations: Object.entries(routes).map(([name, domain]) => ({
      name,
      virtual_hosts: [{ name: domain, domains: [domain] }],
    })),
    secrets: [],
    warnings: [],
  };
}

const names = (r: DeltaResponse) => (r.resources ?? []).map((x) => x.name).sort();

describe('incremental (delta) ADS', () => {
  let server: AdsServer | undefined;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
  });

  it('sends what changed and removes what is gone; a refused push is sent again', async () => {
    const current = { gen: generation(['a', 'b'], { r1: 'one.example', r2: 'two.example' }) };
    server = new AdsServer({ resources: () => current.gen, log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const envoy = new Client(address, server, 'DeltaAggregatedResources');
    clients.push(envoy);
    envoy.call.write({ node: { id: 'd' }, type_url: TYPE_CLUSTER });
    const cds1 = await envoy.next(TYPE_CLUSTER, 0);
    expect(names(cds1)).toEqual(['a', 'b']);
    envoy.call.write({ type_url: TYPE_CLUSTER, response_nonce: cds1.nonce });
    await waitUntil('clusters of 1 taken', () => server?.status().envoys[0]?.acked[TYPE_CLUSTER] === '1');
    envoy.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, resource_names_subscribe: ['r1', 'r2'] });
    const rds1 = await envoy.next(TYPE_ROUTE_CONFIGURATION, 0);
    expect(names(rds1)).toEqual(['r1', 'r2']);
    envoy.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, response_nonce: rds1.nonce });
    await waitUntil(
      'routes of 1 taken',
      () => server?.status().envoys[0]?.acked[TYPE_ROUTE_CONFIGURATION] === '1',
    );

    // One route configuration changes, cluster b is no longer in the generation: r2 alone.
    current.gen = generation(['a'], { r1: 'one.example', r2: 'two.example.org' });
    let seen = envoy.received.length;
    server.update('2');
    const rds2 = await envoy.next(TYPE_ROUTE_CONFIGURATION, seen);
    expect(names(rds2)).toEqual(['r2']);
    expect(rds2.removed_resources ?? []).toEqual([]);
    // It refuses r2: its routes may still name b, which stays.
    envoy.call.write({
      type_url: TYPE_ROUTE_CONFIGURATION,
      response_nonce: rds2.nonce,
      error_detail: { message: 'no' },
    });
    await waitUntil('generation 2 answered', () => server?.status().envoys[0]?.inFlight === undefined);
    expect(envoy.received.slice(seen).map((r) => r.type_url)).toEqual([TYPE_ROUTE_CONFIGURATION]);

    // The next change: r2 again (it was refused) with r1, which changed now; once the routes
    // are taken, b is removed by name.
    current.gen = generation(['a'], { r1: 'one.example.org', r2: 'two.example.org' });
    seen = envoy.received.length;
    server.update('3');
    const rds3 = await envoy.next(TYPE_ROUTE_CONFIGURATION, seen);
    expect(names(rds3)).toEqual(['r1', 'r2']);
    envoy.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, response_nonce: rds3.nonce });
    const cleanup = await envoy.next(TYPE_CLUSTER, seen);
    expect(cleanup.resources ?? []).toEqual([]);
    expect(cleanup.removed_resources).toEqual(['b']);
    envoy.call.write({ type_url: TYPE_CLUSTER, response_nonce: cleanup.nonce });
    await waitUntil('generation 3 delivered', () => server?.status().envoys[0]?.inFlight === undefined);

    // r2 no longer asked for: its next change is not sent; asked for again, it is.
    envoy.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, resource_names_unsubscribe: ['r2'] });
    current.gen = generation(['a'], { r1: 'one.example.org', r2: 'two.example.net' });
    seen = envoy.received.length;
    server.update('4');
    envoy.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, resource_names_subscribe: ['r2'] });
    const rds4 = await envoy.next(TYPE_ROUTE_CONFIGURATION, seen);
    expect(names(rds4)).toEqual(['r2']);
  });

  it('sends a one-route change as one resource where state of the world sends the whole type', async () => {
    const routes = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`r${i}`, `h${i}.example`]));
    const current = { gen: generation(['a'], routes) };
    server = new AdsServer({ resources: () => current.gen, log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const delta = new Client(address, server, 'DeltaAggregatedResources');
    const sotw = new Client(address, server, 'StreamAggregatedResources');
    clients.push(delta, sotw);
    const all = Object.keys(routes);
    delta.call.write({
      node: { id: 'delta' },
      type_url: TYPE_ROUTE_CONFIGURATION,
      resource_names_subscribe: all,
    });
    sotw.call.write({ node: { id: 'sotw' }, type_url: TYPE_ROUTE_CONFIGURATION, resource_names: all });
    const d1 = await delta.next(TYPE_ROUTE_CONFIGURATION, 0);
    const s1 = (await sotw.next(TYPE_ROUTE_CONFIGURATION, 0)) as DeltaResponse & { version_info: string };
    delta.call.write({ type_url: TYPE_ROUTE_CONFIGURATION, response_nonce: d1.nonce });
    sotw.call.write({
      type_url: TYPE_ROUTE_CONFIGURATION,
      response_nonce: s1.nonce,
      version_info: '1',
      resource_names: all,
    });
    await waitUntil(
      'both delivered',
      () => server?.status().envoys.every((e) => e.inFlight === undefined) ?? false,
    );
    const before = new Map(server.status().envoys.map((e) => [e.node, e.sent]));
    current.gen = generation(['a'], { ...routes, r7: 'h7.example.org' });
    const [dn, sn] = [delta.received.length, sotw.received.length];
    server.update('2');
    await delta.next(TYPE_ROUTE_CONFIGURATION, dn);
    await sotw.next(TYPE_ROUTE_CONFIGURATION, sn);
    const sent = (node: string) => {
      const now = server?.status().envoys.find((e) => e.node === node)?.sent;
      const was = before.get(node);
      return {
        resources: (now?.resources ?? 0) - (was?.resources ?? 0),
        bytes: (now?.bytes ?? 0) - (was?.bytes ?? 0),
      };
    };
    expect(sent('delta').resources).toBe(1);
    expect(sent('sotw').resources).toBe(50);
    expect(sent('delta').bytes * 40).toBeLessThan(sent('sotw').bytes);
  });
});
