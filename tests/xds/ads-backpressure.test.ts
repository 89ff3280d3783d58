// Backpressure on the ADS stream, driven by gRPC clients in an Envoy's place: one generation
// in flight per stream until every push of it is answered, newer generations coalesce into
// the newest, and a client that stops reading is reset after the stall time (what was queued
// for it let go) while the others go on, whether it stops answering or leaves its HTTP/2
// window full; and the server stops at once with such a client connected.
import * as grpc from '@grpc/grpc-js';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { TYPE_CLUSTER, TYPE_LISTENER } from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { waitUntil } from '../support/wait-until.js';

type Json = Record<string, unknown>;
interface Response {
  version_info: string;
  type_url: string;
  nonce: string;
}

/** A generation whose clusters weigh about `kb` kilobytes each (metadata padding). */
function generation(version: string, clusters = 1, kb = 1): GatewayResources {
  return {
    clusters: Array.from({ length: clusters }, (_, i) => ({
      name: `c${i}`,
      type: 'STATIC',
      connect_timeout: '1s',
      metadata: { filter_metadata: { pad: { v: version, bytes: 'x'.repeat(kb * 1024) } } },
    })),
    listeners: [{ name: 'l', address: { socket_address: { address: '127.0.0.1', port_value: 1 } } }],
    routeConfigurations: [],
    secrets: [],
    warnings: [],
  };
}

class Client {
  readonly received: Response[] = [];
  readonly call: grpc.ClientDuplexStream<Json, Response>;
  error: grpc.ServiceError | undefined;
  private readonly client: grpc.Client;

  /** With `autoAck`, it answers every push as it comes, as Envoy does. */
  constructor(address: string, server: AdsServer, autoAck = false) {
    const Ctor = grpc.makeGenericClientConstructor(server.definition(), 'Ads');
    this.client = new Ctor(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': -1,
    });
    this.call = (
      this.client as unknown as {
        StreamAggregatedResources(): grpc.ClientDuplexStream<Json, Response>;
      }
    ).StreamAggregatedResources();
    this.call.on('data', (r: Response) => {
      this.received.push(r);
      if (autoAck)
        this.call.write({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce });
    });
    this.call.on('error', (e: grpc.ServiceError) => (this.error = e));
  }

  versions(type: string): string[] {
    return this.received.filter((r) => r.type_url === type).map((r) => r.version_info);
  }

  async answer(type: string, version: string): Promise<void> {
    await waitUntil(`${type} ${version}`, () =>
      this.received.some((r) => r.type_url === type && r.version_info === version),
    );
    const r = this.received
      .filter((x) => x.type_url === type && x.version_info === version)
      .pop() as Response;
    this.call.write({ type_url: type, version_info: version, response_nonce: r.nonce });
  }

  close(): void {
    this.call.end();
    this.client.close();
  }
}

/** A raw HTTP/2 client: it opens an ADS stream, asks for clusters, and never reads a byte. */
function deafClient(
  address: string,
  server: AdsServer,
): { session: ClientHttp2Session; stream: ClientHttp2Stream } {
  const method = server.definition()['StreamAggregatedResources'] as grpc.MethodDefinition<Json, Json>;
  const session = connect(`http://${address}`);
  const stream = session.request({
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: method.path,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.pause();
  const message = method.requestSerialize({ node: { id: 'deaf' }, type_url: TYPE_CLUSTER });
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  stream.write(frame);
  return { session, stream };
}

describe('backpressure on the ADS stream', () => {
  let server: AdsServer | undefined;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
  });

  it('keeps one generation in flight per stream, and sends the newest once it is answered', async () => {
    const current = { gen: generation('1') };
    server = new AdsServer({ resources: () => current.gen, log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const envoy = new Client(address, server);
    clients.push(envoy);
    envoy.call.write({ node: { id: 'slow' }, type_url: TYPE_CLUSTER });
    envoy.call.write({ type_url: TYPE_LISTENER });
    await waitUntil('clusters of 1', () => envoy.versions(TYPE_CLUSTER).length === 1);
    // Two generations while the first is unanswered: neither is sent yet.
    for (const v of ['2', '3']) {
      current.gen = generation(v);
      server.update(v);
    }
    expect(server.status().envoys[0]?.inFlight).toBe('1');
    await envoy.answer(TYPE_CLUSTER, '1');
    await envoy.answer(TYPE_LISTENER, '1');
    await waitUntil('clusters of 3', () => envoy.versions(TYPE_CLUSTER).includes('3'));
    // The second was never sent: it coalesced into the third.
    expect(envoy.versions(TYPE_CLUSTER)).toEqual(['1', '3']);
    expect(envoy.versions(TYPE_LISTENER)).toEqual(['1']);
    await envoy.answer(TYPE_CLUSTER, '3');
    await envoy.answer(TYPE_LISTENER, '3');
    await waitUntil('generation 3 delivered', () => server?.status().envoys[0]?.inFlight === undefined);
    expect(server.status().envoys[0]?.acked).toEqual({ [TYPE_CLUSTER]: '3', [TYPE_LISTENER]: '3' });
  });

  it('resets a stream that stops reading and answering, holding no more than one generation for it meanwhile', async () => {
    // Clusters of 1 MB each: more than HTTP/2's window holds.
    const current = { gen: generation('1', 4, 1024) };
    const logs: string[] = [];
    server = new AdsServer({
      resources: () => current.gen,
      log: (l) => logs.push(l),
      stallMs: 1500,
      // The clusters' answer is waited for as Envoy warms them, here shortly.
      clusterWaitMs: 300,
    });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const stuck = new Client(address, server);
    const reader = new Client(address, server, true);
    clients.push(stuck, reader);
    stuck.call.pause();
    stuck.call.write({ node: { id: 'stuck' }, type_url: TYPE_CLUSTER });
    reader.call.write({ node: { id: 'reader' }, type_url: TYPE_CLUSTER });
    await waitUntil('the reader has its clusters', () => reader.versions(TYPE_CLUSTER).length === 1, 10_000);
    for (const v of ['2', '3', '4']) {
      current.gen = generation(v, 4, 1024);
      server.update(v);
    }
    // Nothing more was queued for the stuck stream than the first generation's clusters.
    const stuckStatus = server.status().envoys.find((e) => e.node === 'stuck');
    expect(stuckStatus?.sent.resources).toBe(4);
    expect(stuckStatus?.inFlight).toBe('1');
    await waitUntil(
      'the stuck stream reset',
      () => logs.some((l) => /"stuck" has not read or answered what it was sent for 1\.5 s/.test(l)),
      10_000,
    );
    expect(server.status().envoys.map((e) => e.node)).toEqual(['reader']);
    stuck.call.resume();
    await waitUntil('the stuck client sees its stream end', () => stuck.error !== undefined, 10_000);
    // Reset (RST_STREAM CANCEL), not a status queued behind the data it did not read.
    expect(stuck.error?.code).toBe(grpc.status.CANCELLED);
    // The reader, which answers, got the newest generation and is still connected.
    await waitUntil('the reader has generation 4', () => reader.versions(TYPE_CLUSTER).includes('4'), 10_000);
    expect(reader.error).toBeUndefined();
    expect(logs.some((l) => /"reader" has not read/.test(l))).toBe(false);
  });

  it('resets a stream whose peer leaves what was written unread (HTTP/2 window full)', async () => {
    const logs: string[] = [];
    server = new AdsServer({
      resources: () => generation('1', 4, 1024),
      log: (l) => logs.push(l),
      stallMs: 1500,
      clusterWaitMs: 60_000,
    });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const { session, stream } = deafClient(address, server);
    let reset = false;
    stream.on('close', () => (reset = true));
    stream.on('error', () => (reset = true));
    try {
      await waitUntil('the deaf stream connected', () => server?.status().envoys.length === 1, 10_000);
      // Its clusters are still within the 60 s warming wait: only the unread write counts.
      await waitUntil(
        'the deaf stream reset',
        () => logs.some((l) => /"deaf" has not read or answered/.test(l)),
        10_000,
      );
      expect(server.status().envoys).toEqual([]);
      await waitUntil('the client sees the reset', () => reset, 10_000);
    } finally {
      session.destroy();
    }
  });

  it('stops at once with a stream that reads nothing', async () => {
    server = new AdsServer({ resources: () => generation('1', 4, 1024), log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const { session } = deafClient(address, server);
    try {
      await waitUntil('the deaf stream connected', () => server?.status().envoys.length === 1, 10_000);
      // With the default 60 s stall time, stop() resets the stream rather than wait for it.
      await server.stop();
      server = undefined;
    } finally {
      session.destroy();
    }
  });
});
