// The ADS server's side of the protocol, driven by a gRPC client in the test's place of an
// Envoy: the rest of a generation waits for the answer on its clusters; an answer to an older
// push is ignored; a refusal is recorded against the version refused; the clusters an Envoy's
// accepted routes name stay until it accepts newer routes; a type the gateway does not serve
// is answered once; a stream without the token, or with a listener address that is not an IP
// address, is refused. (tests/e2e/fleet-xds.test.ts does the same with real Envoys.)
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TYPE_CLUSTER,
  TYPE_LISTENER,
  TYPE_ROUTE_CONFIGURATION,
} from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { decodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { waitUntil } from '../support/wait-until.js';

type Json = Record<string, unknown>;

interface Response {
  version_info: string;
  type_url: string;
  nonce: string;
  resources: { type_url: string; value: Uint8Array }[];
}

function cluster(name: string): Json {
  return { name, type: 'STATIC', connect_timeout: '1s' };
}

function generation(clusters: string[], version: string): GatewayResources {
  return {
    clusters: clusters.map(cluster),
    listeners: [
      { name: `l-${version}`, address: { socket_address: { address: '127.0.0.1', port_value: 1 } } },
    ],
    routeConfigurations: [{ name: 'rc', virtual_hosts: [{ name: 'v', domains: ['*'] }] }],
    secrets: [],
    warnings: [],
  };
}

class FakeEnvoy {
  readonly received: Response[] = [];
  private readonly call: grpc.ClientDuplexStream<Json, Response>;
  error: grpc.ServiceError | undefined;

  constructor(address: string, server: AdsServer, metadata = new grpc.Metadata()) {
    const Client = grpc.makeGenericClientConstructor(server.definition(), 'Ads');
    const client = new Client(address, grpc.credentials.createInsecure()) as unknown as {
      StreamAggregatedResources(m: grpc.Metadata): grpc.ClientDuplexStream<Json, Response>;
    };
    this.call = client.StreamAggregatedResources(metadata);
    this.call.on('data', (r: Response) => this.received.push(r));
    this.call.on('error', (e: grpc.ServiceError) => (this.error = e));
  }

  send(request: Json): void {
    this.call.write(request);
  }

  async next(type: string, after = 0): Promise<Response> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const r = this.received.slice(after).find((x) => x.type_url === type);
      if (r) return r;
      if (Date.now() > deadline) throw new Error(`no ${type} response`);
      await new Promise((res) => setTimeout(res, 10));
    }
  }

  /** Resolves after `ms` with whether any response of `type` came after index `after`. */
  async anyWithin(type: string, after: number, ms: number): Promise<boolean> {
    await new Promise((res) => setTimeout(res, ms));
    return this.received.slice(after).some((x) => x.type_url === type);
  }

  close(): void {
    this.call.end();
  }
}

const names = (r: Response): string[] =>
  (r.resources ?? []).map((a) => decodeAny(a)['name'] as string).sort();

describe('the ADS server (state of the world)', () => {
  let server: AdsServer | undefined;
  const envoys: FakeEnvoy[] = [];
  afterEach(async () => {
    for (const e of envoys.splice(0)) e.close();
    await server?.stop();
  });

  async function start(
    current: { gen: GatewayResources },
    token?: string,
  ): Promise<{ address: string; logs: string[] }> {
    const logs: string[] = [];
    server = new AdsServer({
      resources: () => current.gen,
      log: (l) => logs.push(l),
      ...(token ? { token } : {}),
    });
    return { address: await server.start('127.0.0.1:0'), logs };
  }

  it('sends the rest of a generation only once the Envoy answered for its clusters, and keeps what its routes name', async () => {
    const current = { gen: generation(['a'], '1') };
    const { address } = await start(current);
    server?.update('1');
    const envoy = new FakeEnvoy(address, server as AdsServer);
    envoys.push(envoy);
    const node = { id: 'e1', metadata: { fields: {} } };
    envoy.send({ node, type_url: TYPE_CLUSTER });
    envoy.send({ type_url: TYPE_LISTENER });
    const cds1 = await envoy.next(TYPE_CLUSTER);
    expect(names(cds1)).toEqual(['a']);
    // No listeners before the clusters are answered for.
    expect(await envoy.anyWithin(TYPE_LISTENER, 0, 100)).toBe(false);
    envoy.send({ type_url: TYPE_CLUSTER, version_info: '1', response_nonce: cds1.nonce });
    const lds1 = await envoy.next(TYPE_LISTENER);
    expect(lds1.version_info).toBe('1');
    envoy.send({ type_url: TYPE_LISTENER, version_info: '1', response_nonce: lds1.nonce });
    envoy.send({ type_url: TYPE_ROUTE_CONFIGURATION, resource_names: ['rc'] });
    const rds1 = await envoy.next(TYPE_ROUTE_CONFIGURATION);
    envoy.send({
      type_url: TYPE_ROUTE_CONFIGURATION,
      version_info: '1',
      response_nonce: rds1.nonce,
      resource_names: ['rc'],
    });
    await waitUntil(
      'the routes acknowledged',
      () => server?.status().envoys[0]?.acked[TYPE_ROUTE_CONFIGURATION] === '1',
    );
    expect(server?.status().envoys[0]?.acked).toEqual({
      [TYPE_CLUSTER]: '1',
      [TYPE_LISTENER]: '1',
      [TYPE_ROUTE_CONFIGURATION]: '1',
    });

    // Generation 2 renames the cluster: the routes it accepted still name 'a', so 'a' stays.
    current.gen = generation(['b'], '2');
    const seen = envoy.received.length;
    server?.update('2');
    const cds2 = await envoy.next(TYPE_CLUSTER, seen);
    expect(names(cds2)).toEqual(['a', 'b']);
    envoy.send({ type_url: TYPE_CLUSTER, version_info: '2', response_nonce: cds2.nonce });
    const rds2 = await envoy.next(TYPE_ROUTE_CONFIGURATION, seen);
    // It takes the listeners (as Envoy answers every push: the next generation waits for it).
    const lds2 = await envoy.next(TYPE_LISTENER, seen);
    envoy.send({ type_url: TYPE_LISTENER, version_info: '2', response_nonce: lds2.nonce });
    // It refuses the routes: recorded against generation 2, with its reason.
    envoy.send({
      type_url: TYPE_ROUTE_CONFIGURATION,
      version_info: '1',
      response_nonce: rds2.nonce,
      resource_names: ['rc'],
      error_detail: { code: 3, message: 'no such cluster' },
    });
    await waitUntil('the refusal recorded', () => (server?.status().envoys[0]?.nacked.length ?? 0) > 0);
    expect(server?.status().envoys[0]?.nacked).toEqual([
      { type: TYPE_ROUTE_CONFIGURATION, version: '2', message: 'no such cluster' },
    ]);
    // Generation 3: its routes still name 'a' (it refused 2's), so 'a' is still sent.
    current.gen = generation(['c'], '3');
    const seen3 = envoy.received.length;
    server?.update('3');
    const cds3 = await envoy.next(TYPE_CLUSTER, seen3);
    expect(names(cds3)).toEqual(['a', 'c']);
    envoy.send({ type_url: TYPE_CLUSTER, version_info: '3', response_nonce: cds3.nonce });
    const rds3 = await envoy.next(TYPE_ROUTE_CONFIGURATION, seen3);
    const lds3 = await envoy.next(TYPE_LISTENER, seen3);
    envoy.send({ type_url: TYPE_LISTENER, version_info: '3', response_nonce: lds3.nonce });
    // An answer carrying an older nonce is ignored; the answer to the last push counts.
    envoy.send({
      type_url: TYPE_ROUTE_CONFIGURATION,
      version_info: '1',
      response_nonce: rds2.nonce,
      resource_names: ['rc'],
      error_detail: { message: 'stale' },
    });
    envoy.send({
      type_url: TYPE_ROUTE_CONFIGURATION,
      version_info: '3',
      response_nonce: rds3.nonce,
      resource_names: ['rc'],
    });
    // The two answers travel in order on one stream: once the second counted, the first was seen.
    await waitUntil(
      'the routes of generation 3 acknowledged',
      () => server?.status().envoys[0]?.acked[TYPE_ROUTE_CONFIGURATION] === '3',
    );
    expect(server?.status().envoys[0]?.nacked).toEqual([]);
    expect(server?.status().envoys[0]?.acked[TYPE_ROUTE_CONFIGURATION]).toBe('3');
    // Now its routes name 'c' only: generation 4's clusters drop 'a'.
    current.gen = generation(['c', 'd'], '4');
    const seen4 = envoy.received.length;
    server?.update('4');
    expect(names(await envoy.next(TYPE_CLUSTER, seen4))).toEqual(['c', 'd']);
  });

  it("keeps when each push was sent, written and answered, and the generation's load times", async () => {
    const current = { gen: generation(['a'], '1') };
    const { address } = await start(current);
    const load = { changedAt: 1, readAt: 2, readDoneAt: 3, builtAt: 4 };
    server?.update('1', load);
    const envoy = new FakeEnvoy(address, server as AdsServer);
    envoys.push(envoy);
    envoy.send({ node: { id: 'e1', metadata: { fields: {} } }, type_url: TYPE_CLUSTER });
    const cds = await envoy.next(TYPE_CLUSTER);
    const sent = server?.status().envoys[0]?.pushes[TYPE_CLUSTER];
    expect(sent?.version).toBe('1');
    expect(sent?.answeredAt).toBeUndefined();
    envoy.send({ type_url: TYPE_CLUSTER, version_info: '1', response_nonce: cds.nonce });
    await waitUntil(
      'the clusters acknowledged',
      () => server?.status().envoys[0]?.acked[TYPE_CLUSTER] === '1',
    );
    const push = server?.status().envoys[0]?.pushes[TYPE_CLUSTER];
    expect(push?.sentAt).toBeLessThanOrEqual(push?.writtenAt ?? 0);
    expect(push?.writtenAt).toBeLessThanOrEqual(push?.answeredAt ?? 0);
    const generationTimes = server?.status().generation;
    expect(generationTimes).toMatchObject({ version: '1', load });
    // Its one kind of Envoy's resources, generated then encoded, after the update.
    const kind = generationTimes?.kinds[''];
    expect(generationTimes?.updatedAt).toBeLessThanOrEqual(kind?.startedAt ?? 0);
    expect(kind?.generatedAt).toBeLessThanOrEqual(kind?.encodedAt ?? 0);
    expect(kind?.encodedAt).toBeLessThanOrEqual(push?.sentAt ?? 0);
  });

  it('answers a type it does not serve once, never its acknowledgement', async () => {
    const { address } = await start({ gen: generation(['a'], '1') });
    server?.update('1');
    const envoy = new FakeEnvoy(address, server as AdsServer);
    envoys.push(envoy);
    const eds = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
    envoy.send({ node: { id: 'e1' }, type_url: eds });
    const r = await envoy.next(eds);
    expect(r.resources ?? []).toEqual([]);
    envoy.send({ type_url: eds, version_info: r.version_info, response_nonce: r.nonce });
    expect(await envoy.anyWithin(eds, envoy.received.length, 150)).toBe(false);
  });

  it('refuses a stream without the token, and a listener address that is not an IP address', async () => {
    const { address, logs } = await start({ gen: generation(['a'], '1') }, 'a-token-of-some-length');
    server?.update('1');
    const anonymous = new FakeEnvoy(address, server as AdsServer);
    envoys.push(anonymous);
    anonymous.send({ node: { id: 'x' }, type_url: TYPE_CLUSTER });
    const withToken = new grpc.Metadata();
    withToken.set('authorization', 'Bearer a-token-of-some-length');
    const named = new FakeEnvoy(address, server as AdsServer, withToken);
    envoys.push(named);
    named.send({
      node: { id: 'y', metadata: { fields: { steadfast_node_kind: { stringValue: 'evil.example' } } } },
      type_url: TYPE_CLUSTER,
    });
    const good = new FakeEnvoy(address, server as AdsServer, withToken);
    envoys.push(good);
    good.send({
      node: { id: 'z', metadata: { fields: { steadfast_node_kind: { stringValue: '127.0.0.9' } } } },
      type_url: TYPE_CLUSTER,
    });
    expect(names(await good.next(TYPE_CLUSTER))).toEqual(['a']);
    await waitUntil('both refused streams closed', () => !!anonymous.error && !!named.error);
    expect(anonymous.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(named.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(anonymous.received).toEqual([]);
    expect(named.received).toEqual([]);
    expect(server?.status().envoys.map((e) => [e.node, e.kind])).toEqual([['z', '127.0.0.9']]);
    expect(logs.some((l) => /without the token was refused/.test(l))).toBe(true);
  });
});
