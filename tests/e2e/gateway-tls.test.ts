// TLS end to end in gateway mode, with a CA the test makes: an HTTPS listener (tls.mode
// Terminate, a Secret of type kubernetes.io/tls) beside an HTTP listener of the same Gateway,
// reached with curl --cacert; the session cookie is Secure over TLS and not over plain HTTP;
// a renewed Secret reaches Envoy without touching its listener; and BackendTLSPolicy: an
// https and a wss backend with certificates from the test CA answer through the gateway,
// while a backend with a certificate from another CA, or for another name, fails the
// handshake (503) rather than being trusted.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import {
  type DevKeyPair,
  createDevAuthority,
  issueDevCertificate,
} from '../../extproc/src/local/dev-certificates.js';
import { type LocalGateway, startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { type CurlResponse, curl } from './support/curl.js';
import { ConfigDir, TEST_SESSION_KEY, appliedAtLeast, serviceYaml } from './support/gateway-fixture.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

const HTTP_PORT = 10000;
const HTTPS_PORT = 10443;
const HTTPS_LISTENER = 'gateway/default/gw/listener/https';

const ca = createDevAuthority('steadfast e2e test CA');
const otherCa = createDevAuthority('a CA nobody trusts');

function tlsSecret(name: string, pair: DevKeyPair): string {
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name} }
type: kubernetes.io/tls
data:
  tls.crt: ${Buffer.from(pair.certificate).toString('base64')}
  tls.key: ${Buffer.from(pair.privateKey).toString('base64')}
`;
}

const GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: ${HTTP_PORT} }
    - name: https
      protocol: HTTPS
      port: ${HTTPS_PORT}
      hostname: web.test
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, name: web-cert }] }
`;

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [web.test]
  rules:
    - matches: [{ path: { value: /cart } }]
      backendRefs: [{ name: plain, port: 80 }]
      sessionPersistence: { sessionName: cart, type: Cookie }
    - matches: [{ path: { value: /secure-backend } }]
      backendRefs: [{ name: https-backend, port: 80 }]
    # The echo backend serves WebSocket on /ws.
    - matches: [{ path: { type: Exact, value: /ws } }]
      backendRefs: [{ name: wss-backend, port: 80 }]
    - matches: [{ path: { value: /stranger } }]
      backendRefs: [{ name: stranger, port: 80 }]
    - matches: [{ path: { value: /misnamed } }]
      backendRefs: [{ name: misnamed, port: 80 }]
`;

/** One BackendTLSPolicy per Service: trust the test CA (a ConfigMap), verify backend.test. */
function backendTlsPolicy(service: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: { name: ${service} }
spec:
  targetRefs: [{ group: '', kind: Service, name: ${service} }]
  validation:
    caCertificateRefs: [{ group: '', kind: ConfigMap, name: test-ca }]
    hostname: backend.test
`;
}

const CA_CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata: { name: test-ca }
data:
  ca.crt: |
${ca.certificate
  .trim()
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`;

/** The serial number of the certificate the HTTPS listener presents for `servername`. */
function presentedSerial(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: ca.certificate }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? '';
      socket.destroy();
      resolve(serial);
    });
    socket.once('error', reject);
  });
}

function curlExit(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) =>
    execFile('curl', ['-sS', '-o', '/dev/null', '--max-time', '10', ...args], (err, _out, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    ),
  );
}

describe('gateway mode: HTTPS listeners and BackendTLSPolicy', () => {
  const config = new ConfigDir();
  const backends: RunningBackend[] = [];
  let gateway: LocalGateway;
  let https: string;
  let http: string;
  let resolve: string[];
  const caFile = join(config.path, 'ca.pem');

  beforeAll(async () => {
    const backendCert = issueDevCertificate(ca, { commonName: 'backend.test', dnsNames: ['backend.test'] });
    const plain = await startEchoBackend({ address: '127.0.0.2', name: 'plain' });
    const secure = await startEchoBackend({ address: '127.0.0.3', name: 'secure', tls: backendCert });
    const stranger = await startEchoBackend({
      address: '127.0.0.4',
      name: 'stranger',
      tls: issueDevCertificate(otherCa, { commonName: 'backend.test', dnsNames: ['backend.test'] }),
    });
    const misnamed = await startEchoBackend({
      address: '127.0.0.5',
      name: 'misnamed',
      tls: issueDevCertificate(ca, { commonName: 'elsewhere.test', dnsNames: ['elsewhere.test'] }),
    });
    backends.push(plain, secure, stranger, misnamed);
    writeFileSync(caFile, ca.certificate);
    config.write('gateway.yaml', GATEWAY);
    config.write(
      'secret.yaml',
      tlsSecret('web-cert', issueDevCertificate(ca, { commonName: 'web.test', dnsNames: ['web.test'] })),
    );
    config.write('routes.yaml', ROUTES);
    config.write(
      'services.yaml',
      serviceYaml('plain', [plain]),
      serviceYaml('https-backend', [secure]),
      serviceYaml('wss-backend', [secure], 'kubernetes.io/wss'),
      serviceYaml('stranger', [stranger]),
      serviceYaml('misnamed', [misnamed]),
    );
    config.write(
      'backend-tls.yaml',
      CA_CONFIG_MAP,
      ...['https-backend', 'wss-backend', 'stranger', 'misnamed'].map(backendTlsPolicy),
    );
    gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [config.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: { [HTTP_PORT]: 0, [HTTPS_PORT]: 0 },
      debounceMs: 50,
      log: () => undefined,
    });
    http = gateway.envoy.url('gateway/default/gw/listener/http');
    const port = Number(new URL(gateway.envoy.url(HTTPS_LISTENER)).port);
    https = `https://web.test:${port}`;
    resolve = ['--resolve', `web.test:${port}:127.0.0.1`, '--cacert', caFile];
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    for (const b of backends) await b.close();
    config.remove();
  });

  const viaTls = (path: string, args: string[] = []): Promise<CurlResponse> =>
    curl(`${https}${path}`, [...resolve, ...args]);

  it('serves HTTPS with the Secret’s certificate, HTTP/2 and HTTP/1.1 by ALPN, beside the HTTP listener', async () => {
    const h2 = await viaTls('/cart');
    expect(h2.status).toBe(200);
    expect(h2.headers.get('x-backend-instance')).toEqual(['plain']);
    const versions = await Promise.all(
      [[], ['--http1.1']].map(
        (args) =>
          new Promise<string>((res, rej) =>
            execFile(
              'curl',
              ['-sS', '-o', '/dev/null', '-w', '%{http_version}', ...resolve, ...args, `${https}/cart`],
              (err, out) => (err ? rej(err) : res(out)),
            ),
          ),
      ),
    );
    expect(versions).toEqual(['2', '1.1']);
    expect((await curl(`${http}/cart`, ['-H', 'host: web.test'])).status).toBe(200);
  });

  it('is not trusted without the test CA', async () => {
    const untrusted = await curlExit(['--resolve', resolve[1] ?? '', `${https}/cart`]);
    expect(untrusted.code).toBe(60); // CURLE_PEER_FAILED_VERIFICATION
  });

  it('sets Secure on the session cookie over TLS, not over plain HTTP', async () => {
    const overTls = (await viaTls('/cart')).headers.get('set-cookie') ?? [];
    expect(overTls).toHaveLength(1);
    expect(overTls[0]).toMatch(/^cart=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    const plain = (await curl(`${http}/cart`, ['-H', 'host: web.test'])).headers.get('set-cookie') ?? [];
    expect(plain).toHaveLength(1);
    expect(plain[0]).not.toContain('Secure');
    // A client's own x-forwarded-proto is not trusted (no trusted hops): still no Secure.
    const claimed = await curl(`${http}/cart`, ['-H', 'host: web.test', '-H', 'x-forwarded-proto: https']);
    expect(claimed.headers.get('set-cookie')?.[0]).not.toContain('Secure');
  });

  it('an https backend and a wss backend with certificates from the trusted CA answer', async () => {
    const r = await viaTls('/secure-backend');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-backend-instance')).toEqual(['secure']);
    const port = new URL(https).port;
    const echoed = await new Promise<string>((res, rej) => {
      const ws = new WebSocket(`wss://web.test:${port}/ws`, {
        ca: ca.certificate,
        // web.test is 127.0.0.1 (what curl's --resolve does).
        lookup: ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) =>
          options.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as never,
      });
      ws.once('open', () => ws.send('over tls twice'));
      ws.once('message', (m) => {
        res(String(m));
        ws.close();
      });
      ws.once('error', rej);
    });
    expect(echoed).toContain('over tls twice');
  });

  it('a backend with a certificate from another CA, or for another name, fails the handshake', async () => {
    for (const path of ['/stranger', '/misnamed']) {
      const r = await viaTls(path);
      expect(r.status, path).toBe(503);
    }
    const stats = await gateway.envoy.stats();
    const failures = [...stats]
      .filter(([k]) => k.endsWith('.ssl.fail_verify_error') || k.endsWith('.ssl.fail_verify_san'))
      .reduce((sum, [, v]) => sum + v, 0);
    expect(failures).toBeGreaterThanOrEqual(2);
  });

  it('a renewed Secret is served without touching the listener', async () => {
    const port = Number(new URL(https).port);
    const before = await presentedSerial(port, 'web.test');
    const modifiedBefore = (await gateway.envoy.stats()).get('listener_manager.listener_modified') ?? 0;
    const renewed = issueDevCertificate(ca, { commonName: 'web.test', dnsNames: ['web.test'] });
    const next = gateway.config.generation + 1;
    config.write('secret.yaml', tlsSecret('web-cert', renewed));
    await appliedAtLeast(gateway, next, 0);
    const expected = new X509Certificate(renewed.certificate).serialNumber;
    const deadline = Date.now() + 10_000;
    let now = before;
    while (now !== expected && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      now = await presentedSerial(port, 'web.test');
    }
    expect(now).toBe(expected);
    expect(now).not.toBe(before);
    expect((await gateway.envoy.stats()).get('listener_manager.listener_modified') ?? 0).toBe(modifiedBefore);
    expect((await viaTls('/cart')).status).toBe(200);
  });
});
