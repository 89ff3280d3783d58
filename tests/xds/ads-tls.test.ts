// Mutual TLS on the ADS port, with certificates made here at run time: a client with a
// certificate from the client CA gets its stream; one without a certificate, with another
// CA's or with an expired one is refused in the TLS handshake (the server never sees a
// stream); the token still applies on top; the server's files are read again when they
// change, a half-written rotation or an expired certificate is not put in use, and an open
// stream outlives a rotation.
import * as grpc from '@grpc/grpc-js';
import { X509Certificate } from 'node:crypto';
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
import { START_SKEW_MS, checkValidity } from '../../extproc/src/xds/ads-tls.js';
import { waitUntil } from '../support/wait-until.js';

type Json = Record<string, unknown>;

const resources: GatewayResources = {
  clusters: [{ name: 'a', type: 'STATIC', connect_timeout: '1s' }],
  listeners: [],
  routeConfigurations: [],
  secrets: [],
  warnings: [],
};

const dir = mkdtempSync(join(tmpdir(), 'steadfast-ads-tls-'));
const serverCa = createDevAuthority('ads server CA');
const clientCa = createDevAuthority('ads client CA');
const serverPair = (): DevKeyPair =>
  issueDevCertificate(serverCa, { commonName: 'control plane', ipAddresses: ['127.0.0.1'] });
const clientPair = (ca: DevAuthority, options: { notBefore?: Date; days?: number } = {}): DevKeyPair =>
  issueDevCertificate(ca, { commonName: 'envoy', usage: 'client', ...options });
const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), clientCa: join(dir, 'client-ca.crt') };

function writePair(pair: DevKeyPair): void {
  writeFileSync(files.cert, pair.certificate);
  writeFileSync(files.key, pair.privateKey);
}

/**
 * A TLS connection to the ADS port (ALPN h2, as Envoy and grpc-js do): accepted when the server
 * speaks HTTP/2 on it (its settings frame), with the server certificate's serial; or why not.
 */
function handshake(client?: DevKeyPair): Promise<{ accepted: boolean; serial?: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port: Number(address.split(':').pop()),
      ca: serverCa.certificate,
      ALPNProtocols: ['h2'],
      ...(client ? { cert: client.certificate, key: client.privateKey } : {}),
    });
    let serial: string | undefined;
    // TLS 1.3: the server checks the client's certificate after the client finished, and
    // answers a refusal with an alert; an accepted client hears the server's HTTP/2 settings.
    socket.on('secureConnect', () => (serial = socket.getPeerX509Certificate()?.serialNumber));
    socket.on('data', () => {
      socket.destroy();
      resolve({ accepted: true, ...(serial !== undefined ? { serial } : {}) });
    });
    socket.on('error', (e) => resolve({ accepted: false, error: e.message }));
    socket.on('close', () => resolve({ accepted: false, error: 'closed before a byte of HTTP/2' }));
  });
}

function adsClient(client: DevKeyPair, metadata = new grpc.Metadata()) {
  const Client = grpc.makeGenericClientConstructor((server as AdsServer).definition(), 'Ads');
  const credentials = grpc.credentials.createSsl(
    Buffer.from(serverCa.certificate),
    Buffer.from(client.privateKey),
    Buffer.from(client.certificate),
  );
  const c = new Client(address, credentials) as unknown as {
    StreamAggregatedResources(
      m: grpc.Metadata,
    ): grpc.ClientDuplexStream<Json, { type_url: string; nonce: string }>;
    close(): void;
  };
  const call = c.StreamAggregatedResources(metadata);
  const received: { type_url: string; nonce: string }[] = [];
  const state: { error?: grpc.ServiceError } = {};
  call.on('data', (r: { type_url: string; nonce: string }) => received.push(r));
  call.on('error', (e: grpc.ServiceError) => (state.error = e));
  clients.push(() => {
    call.end();
    c.close();
  });
  return { call, received, state };
}

let server: AdsServer | undefined;
let address = '';
const logs: string[] = [];
const clients: (() => void)[] = [];

async function start(token?: string): Promise<void> {
  writePair(serverPair());
  writeFileSync(files.clientCa, clientCa.certificate);
  server = new AdsServer({
    resources: () => resources,
    log: (l) => logs.push(l),
    tls: files,
    ...(token ? { token } : {}),
  });
  address = await server.start('127.0.0.1:0');
  server.update('1');
}

describe('mutual TLS on the ADS port', () => {
  afterEach(async () => {
    for (const close of clients.splice(0)) close();
    await server?.stop();
    server = undefined;
    logs.length = 0;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves a client with a certificate from the client CA, and refuses the others in the handshake', async () => {
    await start();
    const good = adsClient(clientPair(clientCa));
    good.call.write({ node: { id: 'e1' }, type_url: TYPE_CLUSTER });
    await waitUntil('the clusters sent', () => good.received.some((r) => r.type_url === TYPE_CLUSTER));
    expect(await handshake(clientPair(clientCa))).toMatchObject({ accepted: true });

    const none = await handshake();
    const otherCa = await handshake(clientPair(createDevAuthority('a stranger CA')));
    const expired = await handshake(
      clientPair(clientCa, { notBefore: new Date(Date.now() - 3 * 86400_000), days: 1 }),
    );
    // Without a certificate OpenSSL refuses with an alert; a certificate that does not verify
    // is refused once the handshake's messages are exchanged, before any HTTP/2.
    expect(none).toMatchObject({ accepted: false, error: expect.stringMatching(/certificate required/i) });
    expect(otherCa.accepted).toBe(false);
    expect(expired.accepted).toBe(false);
    // A gRPC client with another CA's certificate gets no stream at all.
    const stranger = adsClient(clientPair(createDevAuthority('another stranger CA')));
    stranger.call.write({ node: { id: 'intruder' }, type_url: TYPE_CLUSTER });
    await waitUntil('the stranger refused', () => stranger.state.error !== undefined);
    expect(stranger.state.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(stranger.received).toEqual([]);
    expect(server?.status().envoys.map((e) => e.node)).toEqual(['e1']);
  });

  it('still asks for the token on top of the certificate', async () => {
    await start('a-token-of-some-length');
    const noToken = adsClient(clientPair(clientCa));
    noToken.call.write({ node: { id: 'x' }, type_url: TYPE_CLUSTER });
    await waitUntil('refused without the token', () => noToken.state.error !== undefined);
    expect(noToken.state.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const metadata = new grpc.Metadata();
    metadata.set('authorization', 'Bearer a-token-of-some-length');
    const withToken = adsClient(clientPair(clientCa), metadata);
    withToken.call.write({ node: { id: 'y' }, type_url: TYPE_CLUSTER });
    await waitUntil('served with the token', () => withToken.received.length > 0);
  });

  it('reads the files again when they change, keeps the last good set meanwhile (half a rotation, an expired certificate), and keeps open streams', async () => {
    await start();
    const before = (await handshake(clientPair(clientCa))).serial;
    const open = adsClient(clientPair(clientCa));
    open.call.write({ node: { id: 'e1' }, type_url: TYPE_CLUSTER });
    await waitUntil('the clusters sent', () => open.received.length === 1);

    // Half a rotation: the new certificate, the old key. Not put in use.
    const next = serverPair();
    writeFileSync(files.cert, next.certificate);
    await waitUntil('the half rotation noticed', () => logs.some((l) => /not usable yet/.test(l)), 10_000);
    expect((await handshake(clientPair(clientCa))).serial).toBe(before);
    // The key follows: the new pair is in use for new connections.
    writeFileSync(files.key, next.privateKey);
    await waitUntil('the rotation reloaded', () => logs.some((l) => /TLS files reloaded/.test(l)), 10_000);
    const after = (await handshake(clientPair(clientCa))).serial;
    expect(after).toBe(new X509Certificate(next.certificate).serialNumber);
    expect(after).not.toBe(before);

    // A rotation to an expired certificate (with its own key) is not put in use.
    const expired = issueDevCertificate(serverCa, {
      commonName: 'control plane',
      ipAddresses: ['127.0.0.1'],
      notBefore: new Date(Date.now() - 3 * 86400_000),
      days: 1,
    });
    writeFileSync(files.cert, expired.certificate);
    writeFileSync(files.key, expired.privateKey);
    await waitUntil(
      'the expired one refused',
      () => logs.some((l) => /tls\.crt: the certificate expired/.test(l)),
      10_000,
    );
    expect((await handshake(clientPair(clientCa))).serial).toBe(after);

    // The stream opened before the rotation still gets each generation.
    open.call.write({ type_url: TYPE_CLUSTER, version_info: '1', response_nonce: open.received[0]?.nonce });
    server?.update('2');
    await waitUntil('generation 2 on the open stream', () => open.received.length === 2);
    expect(open.state.error).toBeUndefined();
  });
});

describe('a certificate at start', () => {
  const startingIn = (ms: number): Buffer =>
    Buffer.from(
      issueDevCertificate(serverCa, { commonName: 'later', notBefore: new Date(Date.now() + ms), days: 30 })
        .certificate,
    );

  it('is taken when it starts within the clock skew allowed, and refused beyond it', () => {
    // A fresh certificate on a node whose clock is a minute behind the issuer's.
    expect(() => checkValidity(startingIn(60_000), 'tls.crt', true)).not.toThrow();
    expect(() => checkValidity(startingIn(START_SKEW_MS + 3_600_000), 'tls.crt', true)).toThrow(
      /tls\.crt: the certificate is not valid yet \(valid from /,
    );
    // A rotation takes it whatever its start (no later change would come to fix a skewed clock).
    expect(() => checkValidity(startingIn(START_SKEW_MS + 3_600_000), 'tls.crt')).not.toThrow();
  });
});
