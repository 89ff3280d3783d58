// A client CA change reaches the streams already open, with certificates made here at run time:
// Envoys of CA A stay connected while the CA in use is a bundle of A and B, and are cut off (stream
// and connection, their reconnects refused in the handshake) once it is B alone; a client of B
// stays connected throughout. A client whose certificate expires while connected is cut off too.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TYPE_CLUSTER } from '../../extproc/src/envoy/envoy-names.js';
import type { GatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import {
  type DevAuthority,
  type DevKeyPair,
  createDevAuthority,
  issueDevCertificate,
} from '../../extproc/src/local/dev-certificates.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { waitUntil } from '../support/wait-until.js';

type Response = { type_url: string; nonce: string; version_info: string };

const resources: GatewayResources = {
  clusters: [{ name: 'a', type: 'STATIC', connect_timeout: '1s' }],
  listeners: [],
  routeConfigurations: [],
  secrets: [],
  warnings: [],
};

const dir = mkdtempSync(join(tmpdir(), 'steadfast-ads-ca-'));
const serverCa = createDevAuthority('ads server CA');
const caA = createDevAuthority('client CA A');
const caB = createDevAuthority('client CA B');
const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), clientCa: join(dir, 'client-ca.crt') };
const envoyPair = (ca: DevAuthority, options: { notBefore?: Date; days?: number } = {}): DevKeyPair =>
  issueDevCertificate(ca, { commonName: 'envoy', usage: 'client', ...options });

let server: AdsServer | undefined;
let address = '';
const logs: string[] = [];
const closers: (() => void)[] = [];

async function start(clientCa: string): Promise<void> {
  const pair = issueDevCertificate(serverCa, { commonName: 'control plane', ipAddresses: ['127.0.0.1'] });
  writeFileSync(files.cert, pair.certificate);
  writeFileSync(files.key, pair.privateKey);
  writeFileSync(files.clientCa, clientCa);
  server = new AdsServer({ resources: () => resources, log: (l) => logs.push(l), tls: files });
  address = await server.start('127.0.0.1:0');
  server.update('1');
}

/** An ADS client (one channel of its own, as each Envoy has) that answers every push. */
async function envoy(node: string, pair: DevKeyPair) {
  const Client = grpc.makeGenericClientConstructor((server as AdsServer).definition(), 'Ads');
  const credentials = grpc.credentials.createSsl(
    Buffer.from(serverCa.certificate),
    Buffer.from(pair.privateKey),
    Buffer.from(pair.certificate),
  );
  const c = new Client(address, credentials) as unknown as {
    StreamAggregatedResources(): grpc.ClientDuplexStream<Record<string, unknown>, Response>;
    close(): void;
  };
  closers.push(() => c.close());
  const open = () => {
    const call = c.StreamAggregatedResources();
    const versions: string[] = [];
    const state: { error?: grpc.ServiceError } = {};
    call.on('data', (r: Response) => {
      versions.push(r.version_info);
      call.write({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce });
    });
    call.on('error', (e: grpc.ServiceError) => (state.error = e));
    closers.push(() => call.end());
    call.write({ node: { id: node }, type_url: TYPE_CLUSTER });
    return { versions, state, cancel: () => call.cancel() };
  };
  const first = open();
  await waitUntil(`${node} served`, () => first.versions.length > 0);
  // `again`: a new stream from the same channel, as Envoy opens after one ends.
  return { ...first, again: open };
}

/** Whether a new TLS connection with `pair` is taken (the server's HTTP/2 settings arrive). */
function accepted(pair: DevKeyPair): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port: Number(address.split(':').pop()),
      ca: serverCa.certificate,
      ALPNProtocols: ['h2'],
      cert: pair.certificate,
      key: pair.privateKey,
    });
    socket.on('data', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

const reloads = () => logs.filter((l) => /TLS files reloaded/.test(l)).length;

describe('a client CA change reaches the open ADS streams', () => {
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await server?.stop();
    server = undefined;
    logs.length = 0;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the Envoys of a CA still in the bundle, and ends those of a CA dropped from it', async () => {
    await start(caA.certificate);
    const a1 = await envoy('a1', envoyPair(caA));
    const a2 = await envoy('a2', envoyPair(caA));

    // A bundle of A and B: both stay, and a client of B is taken too.
    writeFileSync(files.clientCa, caA.certificate + caB.certificate);
    await waitUntil('the bundle in use', () => reloads() === 1, 10_000);
    const b = await envoy('b', envoyPair(caB));
    server?.update('2');
    await waitUntil('generation 2 everywhere', () => [a1, a2, b].every((e) => e.versions.includes('2')));
    expect(logs.filter((l) => /stream and connection ended/.test(l))).toEqual([]);
    // grpc-js's internals this relies on are where it reads them: every chain was read.
    expect(logs.filter((l) => /could not be read/.test(l))).toEqual([]);

    // B alone: the streams of A's clients end, with a line each naming the node and why.
    writeFileSync(files.clientCa, caB.certificate);
    await waitUntil('B alone in use', () => reloads() === 2, 10_000);
    await waitUntil(
      'the A streams ended',
      () => a1.state.error !== undefined && a2.state.error !== undefined,
    );
    for (const node of ['a1', 'a2'])
      expect(logs).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `xds: "${node}": stream and connection ended, its certificate \\(issuer .*CN=client CA A\\) is not from the client CA now in use`,
          ),
        ),
      );
    expect(server?.status().envoys.map((e) => e.node)).toEqual(['b']);
    // A new stream from the same client needs a new connection, and its handshake refuses it.
    const retried = a1.again();
    await waitUntil('the retry refused', () => retried.state.error !== undefined, 10_000);
    expect(retried.state.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(retried.versions).toEqual([]);
    // Their reconnects are refused in the handshake; B's client stays and takes the next generation.
    expect(await accepted(envoyPair(caA))).toBe(false);
    expect(await accepted(envoyPair(caB))).toBe(true);
    server?.update('3');
    await waitUntil('generation 3 on B', () => b.versions.includes('3'));
    expect(b.state.error).toBeUndefined();
    expect(logs.filter((l) => /"b": stream and connection ended/.test(l))).toEqual([]);
  });

  it('ends a stream opened after the change on a connection an earlier CA let in', async () => {
    await start(caA.certificate);
    const a = await envoy('a', envoyPair(caA));
    // Between streams when the CA changes: its own stream ended, its connection kept.
    a.cancel();
    await waitUntil('its stream gone', () => server?.status().envoys.length === 0);
    writeFileSync(files.clientCa, caB.certificate);
    await waitUntil('B alone in use', () => reloads() === 1, 10_000);
    server?.update('2');
    // The next stream comes on the connection whose handshake A passed: ended, sent nothing.
    const next = a.again();
    await waitUntil('the next stream ended', () => next.state.error !== undefined, 10_000);
    expect(next.versions).toEqual([]);
    expect(logs).toContainEqual(
      expect.stringMatching(
        /stream and connection ended, its certificate \(issuer .*CN=client CA A\) is not from/,
      ),
    );
    expect(server?.status().envoys).toEqual([]);
    expect(await accepted(envoyPair(caA))).toBe(false);
  });

  it('ends the stream of a client whose certificate expires while connected', async () => {
    await start(caA.certificate);
    // Valid from an hour ago until two seconds from now.
    const hourAgo = new Date(Date.now() - 3600_000);
    const shortLived = await envoy(
      'brief',
      envoyPair(caA, { notBefore: hourAgo, days: (3600_000 + 2000) / 86400_000 }),
    );
    const lasting = await envoy('lasting', envoyPair(caA));
    await waitUntil('the expired one ended', () => shortLived.state.error !== undefined, 10_000);
    expect(logs).toContainEqual(
      expect.stringMatching(
        /xds: "brief": stream and connection ended, its certificate expired \(valid until /,
      ),
    );
    server?.update('2');
    await waitUntil('generation 2 on the other', () => lasting.versions.includes('2'));
    expect(lasting.state.error).toBeUndefined();
    expect(server?.status().envoys.map((e) => e.node)).toEqual(['lasting']);
  });
  it('ends the stream of a client whose CA expires while it is connected', async () => {
    // The client CA itself valid until six seconds from now (the server, both handshakes and
    // first pushes take well under one); the Envoy's certificate for 30 days.
    const brief = createDevAuthority('brief client CA', (3600_000 + 6000) / 86400_000);
    await start(`${caA.certificate}${brief.certificate}`);
    const orphan = await envoy('orphan', envoyPair(brief));
    const lasting = await envoy('lasting', envoyPair(caA));
    await waitUntil('the one under the expired CA ended', () => orphan.state.error !== undefined, 20_000);
    expect(logs).toContainEqual(
      expect.stringMatching(
        /xds: "orphan": stream and connection ended, the certificate of its issuer .*brief client CA expired \(valid until /,
      ),
    );
    server?.update('2');
    await waitUntil('generation 2 on the other', () => lasting.versions.includes('2'));
    expect(lasting.state.error).toBeUndefined();
    expect(server?.status().envoys.map((e) => e.node)).toEqual(['lasting']);
  });
});
