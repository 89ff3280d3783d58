// The ADS port's mutual TLS from a Kubernetes Secret (serve --kubeconfig --xds-tls-secret),
// on a real API server, with a real Envoy and certificates this test makes: the Envoy with a
// certificate from the Secret's ca.crt is served; the Secret rotated under load — first half
// (a new tls.crt beside the old tls.key), then whole — fails no request, keeps the last good
// set while half done and puts the new certificate in use for new connections once whole;
// an Envoy with another CA's certificate is refused; the client CA from a Secret of its own is
// followed too; a Secret that can be read but not watched keeps the set read, is tried again and
// followed once it can be (a rotation meanwhile is then put in use); a Secret missing or not
// readable stops serve, naming it and the RBAC it needs.
import { execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import {
  type DevKeyPair,
  createDevAuthority,
  issueDevCertificate,
} from '../../extproc/src/local/dev-certificates.js';
import { envoyBinary } from '../../extproc/src/local/envoy-binary.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { KUBECTL, type LocalKube, startLocalKube } from '../../scripts/kube-local.mjs';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';
import { REPO_ROOT, steadfastBin } from '../support/paths.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, until, xdsView } from './support/fleet.js';
import { startRefusingProxy } from './support/refusing-proxy.js';
import { TEST_SESSION_KEY, freePort } from './support/gateway-fixture.js';
import { appServiceYaml, gatewayYaml, sessionKeySecretYaml, shopRouteYaml } from './support/kube-objects.js';

const ENVOY_ADDRESSES = ['127.0.57.10', '127.0.57.11', '127.0.57.12'] as const;
const SECRET = 'steadfast-system/xds-server';

/** The kubernetes.io/tls Secret `xds-server` (or `name`) as cert-manager writes it: tls.crt, tls.key, ca.crt. */
function xdsSecretYaml(cert: string, key: string, ca: string, name = 'xds-server'): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name}, namespace: steadfast-system }
type: kubernetes.io/tls
data:
  tls.crt: ${b64(cert)}
  tls.key: ${b64(key)}
  ca.crt: ${b64(ca)}
`;
}

describe('the ADS port with mutual TLS from a Kubernetes Secret (serve --xds-tls-secret)', () => {
  let kube: LocalKube;
  let backend: RunningBackend;
  let serve: CliProcess;
  let adminUrl: string;
  let xdsPort: number;
  let gatewayPort: number;
  const envoys: EnvoyProcess[] = [];
  const certs = mkdtempSync(join(tmpdir(), 'steadfast-xds-secret-'));
  const file = (name: string) => join(certs, name);
  const serverCa = createDevAuthority('xds server CA');
  const clientCa = createDevAuthority('xds client CA');
  const serverPair = (): DevKeyPair =>
    issueDevCertificate(serverCa, { commonName: 'steadfast xds', ipAddresses: ['127.0.0.1'] });
  const first = serverPair();
  const envoyPair = issueDevCertificate(clientCa, { commonName: 'envoy', usage: 'client' });
  const envoyTls = { cert: file('envoy.crt'), key: file('envoy.key'), ca: file('server-ca.crt') };

  const kubectl = (args: readonly string[], input?: string): string =>
    execFileSync(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);
  const serveArgs = (kubeconfig: string, secret: string, port = xdsPort) => [
    'serve',
    ...['--kubeconfig', kubeconfig, '--session-key-secret', 'steadfast-system/session-keys'],
    ...['--xds', `127.0.0.1:${port}`, '--xds-tls-secret', secret],
    ...['--ext-proc-address', '127.0.0.1:0', '--admin-port', '0'],
  ];
  /**
   * Whether the ADS port on `port` takes a client with `pair`: under TLS 1.3 the server refuses a
   * client certificate after the handshake, so only the server's HTTP/2 settings prove it accepted.
   */
  const accepts = (port: number, pair: DevKeyPair): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port,
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
  /** The serial of the certificate the ADS port shows a new connection from an Envoy of the client CA. */
  const servedSerial = (port = xdsPort): Promise<string | undefined> =>
    new Promise((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port,
        ca: serverCa.certificate,
        ALPNProtocols: ['h2'],
        cert: envoyPair.certificate,
        key: envoyPair.privateKey,
      });
      socket.on('secureConnect', () => {
        resolve(socket.getPeerX509Certificate()?.serialNumber);
        socket.destroy();
      });
      socket.on('error', () => resolve(undefined));
    });

  beforeAll(async () => {
    kube = await startLocalKube({ log: () => {} });
    backend = await startEchoBackend({ address: '127.0.0.1', name: 'xds-secret' });
    gatewayPort = await freePort();
    xdsPort = await freePort();
    writeFileSync(envoyTls.cert, envoyPair.certificate);
    writeFileSync(envoyTls.key, envoyPair.privateKey);
    writeFileSync(envoyTls.ca, serverCa.certificate);
    apply(
      [
        sessionKeySecretYaml([TEST_SESSION_KEY]),
        xdsSecretYaml(first.certificate, first.privateKey, clientCa.certificate),
        gatewayYaml(gatewayPort),
        appServiceYaml([backend.port]),
        shopRouteYaml({}),
      ].join('---\n'),
    );
    serve = new CliProcess(serveArgs(kube.steadfastConfig, SECRET));
    adminUrl = (
      await serve.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/, 90_000)
    )[1] as string;
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: [ENVOY_ADDRESSES[0]],
        nodePrefix: 'secret',
        tls: envoyTls,
      })),
    );
  }, 240_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await serve?.exit;
    await Promise.all(envoys.map((e) => e.stop()));
    await backend?.close();
    await kube?.stop();
    rmSync(certs, { recursive: true, force: true });
  });

  it('serves the port with the Secret, and an Envoy with a certificate from its ca.crt gets the routes', async () => {
    expect(serve.output).toMatch(/ADS on 127\.0\.0\.1:\d+: mutual TLS \(.*steadfast xds/);
    expect(await servedSerial()).toBe(new X509Certificate(first.certificate).serialNumber);
    const url = `http://${ENVOY_ADDRESSES[0]}:${gatewayPort}`;
    await until(
      async () => (await getOnce(`${url}/cart/a`, { host: 'shop.example' })).status === 200,
      15_000,
      url,
    );
  });

  it('rotates with the Secret under load: half a rotation keeps the last set, the whole one is used, no request fails', async () => {
    const url = `http://${ENVOY_ADDRESSES[0]}:${gatewayPort}`;
    const load = startBoundedLoad({
      url: `${url}/cart/load`,
      headers: { host: 'shop.example' },
      ratePerSecond: 50,
      durationMs: 6000,
      maxRequests: 300,
    });
    const next = serverPair();
    apply(xdsSecretYaml(next.certificate, first.privateKey, clientCa.certificate));
    await serve.waitFor(
      /xds: TLS Secret steadfast-system\/xds-server changed but not usable yet, keeping the last: Secret steadfast-system\/xds-server tls\.key: it is not the key of the certificate/,
      15_000,
    );
    expect(await servedSerial()).toBe(new X509Certificate(first.certificate).serialNumber);
    apply(xdsSecretYaml(next.certificate, next.privateKey, clientCa.certificate));
    await serve.waitFor(/xds: TLS Secret steadfast-system\/xds-server reloaded; new connections get/, 15_000);
    expect(await servedSerial()).toBe(new X509Certificate(next.certificate).serialNumber);
    // A new Envoy checks the rotated certificate and gets its configuration.
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: [ENVOY_ADDRESSES[1]],
        nodePrefix: 'after',
        tls: envoyTls,
      })),
    );
    const second = `http://${ENVOY_ADDRESSES[1]}:${gatewayPort}`;
    await until(
      async () => (await getOnce(`${second}/cart/b`, { host: 'shop.example' })).status === 200,
      15_000,
      second,
    );
    const result = await load.done;
    expect(result.samples.length).toBeGreaterThan(200);
    expect(result.failed).toEqual([]);
  });

  it('refuses an Envoy whose certificate comes from another CA: it never gets a stream', async () => {
    const stranger = issueDevCertificate(createDevAuthority('a stranger CA'), {
      commonName: 'stranger',
      usage: 'client',
    });
    writeFileSync(file('stranger.crt'), stranger.certificate);
    writeFileSync(file('stranger.key'), stranger.privateKey);
    writeFileSync(
      file('stranger.yaml'),
      execFileSync(
        process.execPath,
        [
          steadfastBin(),
          ...['envoy-config', '--xds', `127.0.0.1:${xdsPort}`, '--address', ENVOY_ADDRESSES[2]],
          ...['--envoy-admin-port', '0', '--node-id', 'stranger'],
          ...['--xds-tls-cert', file('stranger.crt'), '--xds-tls-key', file('stranger.key')],
          ...['--xds-tls-ca', envoyTls.ca],
        ],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      ),
    );
    // Not started with startEnvoy: this Envoy never gets a configuration, so it is never LIVE.
    const envoy = spawn(
      envoyBinary(),
      ['-c', file('stranger.yaml'), '--disable-hot-restart', '--admin-address-path', file('stranger.admin')],
      { stdio: 'ignore' },
    );
    try {
      const stats = async () => {
        if (!existsSync(file('stranger.admin'))) return new Map<string, number>();
        const admin = readFileSync(file('stranger.admin'), 'utf8').trim();
        const text = await fetch(
          `http://${admin}/stats?filter=steadfast_xds.upstream_cx_connect_fail|control_plane.connected_state`,
        )
          .then((r) => r.text())
          .catch(() => '');
        return new Map(text.split('\n').map((l) => [l.split(': ')[0], Number(l.split(': ')[1])] as const));
      };
      // Each connection it opens is refused in the TLS handshake (a connect failure to Envoy); it retries.
      await until(
        async () => ((await stats()).get('cluster.steadfast_xds.upstream_cx_connect_fail') ?? 0) >= 2,
        20_000,
        'the stranger refused twice',
      );
      expect((await stats()).get('control_plane.connected_state')).toBe(0);
      expect((await xdsView(adminUrl)).envoys.map((e) => e.node).sort()).toEqual(['after-0', 'secret-0']);
      expect(serve.output).not.toMatch(/"stranger" connected/);
    } finally {
      const exited = new Promise((r) => envoy.once('exit', r));
      if (envoy.exitCode === null && envoy.kill('SIGTERM')) await exited;
    }
  });

  it("takes the Envoys' CA from --xds-client-ca-secret, follows it, and keeps the last when it is deleted", async () => {
    const otherCa = createDevAuthority('another Envoy CA');
    const otherPair = issueDevCertificate(otherCa, { commonName: 'other envoy', usage: 'client' });
    const caSecret = (ca: string) => `apiVersion: v1
kind: Secret
metadata: { name: envoy-ca, namespace: steadfast-system }
data: { ca.crt: ${Buffer.from(ca).toString('base64')} }
`;
    apply(caSecret(otherCa.certificate));
    const port = await freePort();
    const second = new CliProcess([
      ...serveArgs(kube.steadfastConfig, SECRET, port),
      ...['--xds-client-ca-secret', 'steadfast-system/envoy-ca'],
    ]);
    try {
      await second.waitFor(/ready; ext_proc on/, 90_000);
      // The CA Secret's ca.crt decides, not the ca.crt of the Secret with the certificate.
      expect(await accepts(port, otherPair)).toBe(true);
      expect(await accepts(port, envoyPair)).toBe(false);
      apply(caSecret(clientCa.certificate));
      await second.waitFor(
        /xds: TLS Secret steadfast-system\/xds-server \(client CA from Secret steadfast-system\/envoy-ca\) reloaded/,
        15_000,
      );
      expect(await accepts(port, envoyPair)).toBe(true);
      expect(await accepts(port, otherPair)).toBe(false);
      kubectl(['delete', 'secret', 'envoy-ca', '-n', 'steadfast-system']);
      await second.waitFor(
        /keeping the last: Secret steadfast-system\/envoy-ca \(--xds-client-ca-secret\) is gone/,
        15_000,
      );
      expect(await accepts(port, envoyPair)).toBe(true);
    } finally {
      second.kill('SIGTERM');
      await second.exit;
    }
  }, 120_000);

  it('keeps the last set while the Secret can be read but not watched, and follows it once it can', async () => {
    // In front of the API server, a proxy refuses (403) the list and watch of this Secret, as an
    // authorizer would for an account that may only get it (RBAC cannot say so while the same
    // account lists every Secret of the cluster, as the provider does); the rest passes through.
    const server = /server: (\S+)/.exec(readFileSync(kube.steadfastConfig, 'utf8'))?.[1] as string;
    const caFile = /certificate-authority: (\S+)/.exec(
      readFileSync(kube.steadfastConfig, 'utf8'),
    )?.[1] as string;
    const proxy = await startRefusingProxy(
      server,
      readFileSync(caFile),
      (method, path) =>
        method === 'GET' &&
        path.startsWith('/api/v1/namespaces/steadfast-system/secrets?') &&
        decodeURIComponent(path).includes('metadata.name=xds-server'),
    );
    const viaProxy = file('proxied.kubeconfig');
    writeFileSync(
      viaProxy,
      readFileSync(kube.steadfastConfig, 'utf8')
        .replace(/server: \S+/, `server: ${proxy.url}`)
        // Plain HTTP to the proxy on loopback: the kubeconfig loader asks for this to allow it.
        .replace(/certificate-authority: \S+/, 'insecure-skip-tls-verify: true'),
    );
    const before = serverPair();
    apply(xdsSecretYaml(before.certificate, before.privateKey, clientCa.certificate));
    const port = await freePort();
    const second = new CliProcess(serveArgs(viaProxy, SECRET, port));
    let secondAdmin = '';
    const watched = async () => {
      const text = await (await fetch(`${secondAdmin}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith('steadfast_kubernetes_secret_watched{secret="steadfast-system/xds-server"'),
        );
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    try {
      secondAdmin = (await second.waitFor(/ready; ext_proc on \S+; admin on ([^\s;]+)/, 90_000))[1] as string;
      await second.waitFor(
        /xds: TLS Secret steadfast-system\/xds-server \(--xds-tls-secret\): not watched, so its changes are not seen; what it held stays in use; trying again \(up to every 30 s\): cannot list Secret \(v1\): .*forbidden/,
        15_000,
      );
      expect(await watched()).toBe(0);
      // Rotated meanwhile.
      const rotated = serverPair();
      apply(xdsSecretYaml(rotated.certificate, rotated.privateKey, clientCa.certificate));
      const refusedBefore = proxy.refusals;
      // Tried again (at 1, 2, 4… s), at least once since the rotation: the log said it once.
      await until(() => proxy.refusals >= Math.max(3, refusedBefore + 1), 15_000, 'three tries');
      expect(second.output.match(/xds-server \(--xds-tls-secret\): not watched/g)).toHaveLength(1);
      // Seconds after the rotation, which a watched Secret would have brought by now: not seen,
      // the set read at start stays in use.
      expect(await servedSerial(port)).toBe(new X509Certificate(before.certificate).serialNumber);
      proxy.refusing = false;
      await second.waitFor(
        /xds: TLS Secret steadfast-system\/xds-server \(--xds-tls-secret\): watched now/,
        20_000,
      );
      await second.waitFor(
        /xds: TLS Secret steadfast-system\/xds-server reloaded; new connections get/,
        15_000,
      );
      expect(await servedSerial(port)).toBe(new X509Certificate(rotated.certificate).serialNumber);
      expect(await watched()).toBe(1);
    } finally {
      second.kill('SIGTERM');
      await second.exit;
      await proxy.close();
    }
  }, 120_000);

  it('stops at start on a Secret that is missing, whose certificate expired, or that the account may not read, naming the RBAC it needs', async () => {
    const missing = new CliProcess(serveArgs(kube.steadfastConfig, 'steadfast-system/nope'));
    expect((await missing.exit).code).toBe(2);
    expect(missing.output).toMatch(/--xds-tls-secret: Secret steadfast-system\/nope not found/);
    // cert-manager stuck: every Envoy would refuse the port, so serve does not start on it.
    const stale = issueDevCertificate(serverCa, {
      commonName: 'steadfast xds',
      ipAddresses: ['127.0.0.1'],
      notBefore: new Date(Date.now() - 3 * 86400_000),
      days: 1,
    });
    apply(xdsSecretYaml(stale.certificate, stale.privateKey, clientCa.certificate, 'xds-expired'));
    const expired = new CliProcess(serveArgs(kube.steadfastConfig, 'steadfast-system/xds-expired'));
    expect((await expired.exit).code).toBe(2);
    expect(expired.output).toMatch(
      /--xds-tls-secret: Secret steadfast-system\/xds-expired tls\.crt: the certificate expired \(valid from .+ until .+\)/,
    );
    // An account whose Role names another Secret only.
    apply(`apiVersion: v1
kind: ServiceAccount
metadata: { name: narrow, namespace: steadfast-system }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: narrow, namespace: steadfast-system }
rules: [{ apiGroups: [''], resources: [secrets], resourceNames: [other], verbs: [get, list, watch] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: narrow, namespace: steadfast-system }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: narrow }
subjects: [{ kind: ServiceAccount, name: narrow, namespace: steadfast-system }]
`);
    const token = kubectl(['create', 'token', 'narrow', '-n', 'steadfast-system']).trim();
    const narrow = file('narrow.kubeconfig');
    writeFileSync(narrow, readFileSync(kube.steadfastConfig, 'utf8').replace(/token: .*/, `token: ${token}`));
    const refused = new CliProcess(serveArgs(narrow, SECRET));
    expect((await refused.exit).code).toBe(2);
    expect(refused.output).toMatch(
      /--xds-tls-secret: Secret steadfast-system\/xds-server cannot be read: .*403.*; the account needs get, list and watch on secrets in namespace steadfast-system/,
    );
  }, 60_000);
});
