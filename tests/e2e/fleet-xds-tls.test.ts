// The ADS port under mutual TLS with real Envoys, with certificates this test makes: an Envoy
// started from `envoy-config --xds --xds-tls-*` serves the routes; the control plane's
// certificate is rotated on disk under load and no request fails, the Envoy keeps its
// configuration and takes the next change, and an Envoy connecting after the rotation (on
// the state-of-the-world stream, the first is on delta) checks the new certificate. A client CA
// that no longer issued the Envoys' certificates ends their streams: they keep serving, are
// refused when they reconnect, and come back once it does again. Beyond loopback, serve refuses
// clear text unless told --xds-insecure, and says so at every start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import {
  type DevKeyPair,
  createDevAuthority,
  issueDevCertificate,
} from '../../extproc/src/local/dev-certificates.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, until, xdsView } from './support/fleet.js';
import {
  ConfigDir,
  TEST_SESSION_KEY,
  freePort,
  gatewayYaml,
  serviceYaml,
} from './support/gateway-fixture.js';

const ENVOY_ADDRESSES = ['127.0.35.10', '127.0.35.11'] as const;

function routesYaml(extraPath?: string): string {
  const extra = extraPath
    ? `    - matches: [{ path: { value: ${extraPath} } }]
      backendRefs: [{ name: app, port: 80 }]
`
    : '';
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /cart } }]
      backendRefs: [{ name: app, port: 80 }]
${extra}`;
}

describe('a fleet fed over ADS with mutual TLS (serve --xds-tls-*)', () => {
  const config = new ConfigDir();
  const certs = mkdtempSync(join(tmpdir(), 'steadfast-xds-tls-'));
  const serverCa = createDevAuthority('xds server CA');
  const clientCa = createDevAuthority('xds client CA');
  const file = (name: string) => join(certs, name);
  const serverPair = (): DevKeyPair =>
    issueDevCertificate(serverCa, { commonName: 'steadfast xds', ipAddresses: ['127.0.0.1'] });
  let backends: RunningBackend[] = [];
  let serve: CliProcess;
  let xdsPort: number;
  let gatewayPort: number;
  const envoys: EnvoyProcess[] = [];
  const envoyTls = { cert: file('envoy.crt'), key: file('envoy.key'), ca: file('server-ca.crt') };

  beforeAll(async () => {
    const first = serverPair();
    writeFileSync(file('server.crt'), first.certificate);
    writeFileSync(file('server.key'), first.privateKey);
    writeFileSync(file('client-ca.crt'), clientCa.certificate);
    writeFileSync(file('server-ca.crt'), serverCa.certificate);
    const envoyPair = issueDevCertificate(clientCa, { commonName: 'envoy', usage: 'client' });
    writeFileSync(envoyTls.cert, envoyPair.certificate);
    writeFileSync(envoyTls.key, envoyPair.privateKey);
    backends = [await startEchoBackend({ address: '127.0.35.2', name: 'app-a' })];
    gatewayPort = await freePort();
    xdsPort = await freePort();
    config.write('gateway.yaml', gatewayYaml(gatewayPort));
    config.write('services.yaml', serviceYaml('app', backends));
    config.write('routes.yaml', routesYaml());
    serve = new CliProcess([
      'serve',
      ...['--config', config.path, '--xds', `127.0.0.1:${xdsPort}`],
      ...['--xds-tls-cert', file('server.crt'), '--xds-tls-key', file('server.key')],
      ...['--xds-client-ca', file('client-ca.crt'), '--session-key', TEST_SESSION_KEY],
      ...['--ext-proc-address', '127.0.0.1:0', '--admin-port', '0'],
    ]);
    await serve.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/);
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: [ENVOY_ADDRESSES[0]],
        nodePrefix: 'tls-envoy',
        tls: envoyTls,
      })),
    );
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
    rmSync(certs, { recursive: true, force: true });
  });

  it('says at start that the port is mutual TLS, and the Envoy serves the routes over it', async () => {
    expect(serve.output).toMatch(/ADS on 127\.0\.0\.1:\d+: mutual TLS \(.*steadfast xds/);
    const url = `http://${ENVOY_ADDRESSES[0]}:${gatewayPort}`;
    await until(async () => (await getOnce(`${url}/cart/a`)).status === 200, 15_000, `${url} serving`);
  });

  it('rotates its certificate under load: no failed request, the Envoy keeps its configuration and takes the next change', async () => {
    const url = `http://${ENVOY_ADDRESSES[0]}:${gatewayPort}`;
    const load = startBoundedLoad({
      url: `${url}/cart/load`,
      ratePerSecond: 50,
      durationMs: 6000,
      maxRequests: 300,
    });
    const next = serverPair();
    writeFileSync(file('server.key'), next.privateKey);
    writeFileSync(file('server.crt'), next.certificate);
    await serve.waitFor(/xds: TLS files reloaded/, 15_000);
    // The Envoy's open stream goes on: a route change reaches it.
    config.write('routes.yaml', routesYaml('/after-rotation'));
    await until(
      async () => (await getOnce(`${url}/after-rotation`)).status === 200,
      15_000,
      'the change served',
    );
    // A new connection checks the rotated certificate: a second Envoy gets its configuration.
    envoys.push(
      ...(await startFleetEnvoys({
        xdsPort,
        addresses: [ENVOY_ADDRESSES[1]],
        nodePrefix: 'tls-envoy-after',
        tls: envoyTls,
        // State of the world beside the first Envoy's delta stream: both protocols on one port.
        protocol: 'sotw',
      })),
    );
    const second = `http://${ENVOY_ADDRESSES[1]}:${gatewayPort}`;
    await until(
      async () => (await getOnce(`${second}/after-rotation`)).status === 200,
      15_000,
      `${second} serving`,
    );
    const result = await load.done;
    expect(result.samples.length).toBeGreaterThan(200);
    expect(result.failed).toEqual([]);
  });

  it("ends the Envoys' streams once the client CA no longer issued their certificates; refused meanwhile, they come back when it does", async () => {
    const lines = (re: RegExp) => serve.output.split('\n').filter((l) => re.test(l)).length;
    const reloads = () => lines(/xds: TLS files reloaded/);
    const ended =
      /xds: "tls-envoy(-after)?-0": stream and connection ended, its certificate \(issuer .*CN=xds client CA\) is not from the client CA now in use/;
    const connected = /xds: "tls-envoy(-after)?-0" connected/;
    const served = async (path: string) => {
      for (const a of ENVOY_ADDRESSES)
        await until(
          async () => (await getOnce(`http://${a}:${gatewayPort}${path}`)).status === 200,
          15_000,
          `${a}${path}`,
        );
    };
    const otherCa = createDevAuthority('another client CA');

    // A bundle that still holds the Envoys' CA: both streams stay and take a change.
    let before = reloads();
    writeFileSync(file('client-ca.crt'), clientCa.certificate + otherCa.certificate);
    await until(() => reloads() === before + 1, 15_000, 'the bundle in use');
    config.write('routes.yaml', routesYaml('/with-bundle'));
    await served('/with-bundle');
    expect(lines(ended)).toBe(0);

    // The other CA alone: both streams end, one line each naming the node.
    const connects = lines(connected);
    const attempts = async () =>
      (await envoys[0]?.stats('^cluster\\.steadfast_xds\\.upstream_cx_total$'))?.get(
        'cluster.steadfast_xds.upstream_cx_total',
      ) ?? 0;
    before = reloads();
    writeFileSync(file('client-ca.crt'), otherCa.certificate);
    await until(() => lines(ended) === 2, 15_000, 'both streams ended');
    expect(reloads()).toBe(before + 1);
    // The first Envoy connects twice more (its reconnects), and neither is taken: no stream, no
    // node on the control plane. The Envoys serve the configuration they have.
    const tried = await attempts();
    await until(async () => (await attempts()) >= tried + 2, 30_000, 'two reconnects');
    expect(lines(connected)).toBe(connects);
    const adminUrl = /admin on ([^\s;]+)/.exec(serve.output)?.[1] as string;
    expect((await xdsView(adminUrl)).envoys).toEqual([]);
    await served('/with-bundle');

    // Their CA again: they reconnect on their own and take the next change.
    writeFileSync(file('client-ca.crt'), clientCa.certificate);
    await until(() => lines(connected) === connects + 2, 45_000, 'both reconnected');
    config.write('routes.yaml', routesYaml('/after-ca'));
    await served('/after-ca');
  }, 120_000);

  it('refuses clear text beyond loopback unless told --xds-insecure, and says so at every start', async () => {
    const tokenFile = file('token');
    writeFileSync(tokenFile, 'a-token-of-some-length\n', { mode: 0o600 });
    const common = [
      'serve',
      '--config',
      config.path,
      '--session-key',
      TEST_SESSION_KEY,
      '--xds-token-file',
      tokenFile,
    ];
    const refused = new CliProcess([...common, '--xds', '0.0.0.0:0']);
    expect((await refused.exit).code).toBe(2);
    expect(refused.output).toMatch(/--xds 0\.0\.0\.0:0 is reachable from other machines and not encrypted/);
    const insecure = new CliProcess([
      ...common,
      ...['--xds', '0.0.0.0:0', '--xds-insecure', '--ext-proc-address', '127.0.0.1:0', '--admin-port', '0'],
    ]);
    try {
      await insecure.waitFor(/ready;/);
      expect(insecure.output).toMatch(/ADS on 0\.0\.0\.0:\d+: warning: clear text \(--xds-insecure\)/);
    } finally {
      insecure.kill('SIGTERM');
      await insecure.exit;
    }
  });
});
