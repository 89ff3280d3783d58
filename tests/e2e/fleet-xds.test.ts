// One control plane for a fleet: `steadfast serve --xds` feeds two real Envoys over ADS, each
// started from `steadfast envoy-config --xds` and binding its own loopback address. Both serve
// the routes; a session sealed by one continues on the other (shared keys); a route change
// reaches both; /v1/xds shows what each took; and the control plane restarted under load
// loses no request (the Envoys keep their configuration and reconnect).
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import {
  expectNoLossWhileRestarting,
  expectSessionContinues,
  startFleetEnvoys,
  until,
} from './support/fleet.js';
import { exchange } from './conformance/exchange.js';
import {
  ConfigDir,
  TEST_SESSION_KEY,
  freePort,
  gatewayYaml,
  serviceYaml,
} from './support/gateway-fixture.js';

const ENVOY_ADDRESSES = ['127.0.0.10', '127.0.0.11'] as const;

function routesYaml(extraPath?: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /cart } }]
      retry: { attempts: 2, codes: [503] }
      sessionPersistence: { sessionName: cart-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
${
  extraPath
    ? `    - matches: [{ path: { value: ${extraPath} } }]
      backendRefs: [{ name: app, port: 80 }]
`
    : ''
}`;
}

describe('a fleet of Envoys fed over ADS (serve --xds)', () => {
  const config = new ConfigDir();
  let backends: RunningBackend[] = [];
  let serve: CliProcess;
  let xdsPort: number;
  let gatewayPort: number;
  let adminUrl: string;
  const envoys: EnvoyProcess[] = [];
  const urls: string[] = [];
  /** The stream carries the session keys: the Envoys present a token. */
  const tokenFile = join(config.path, '..', `${basename(config.path)}-xds-token`);

  const startServe = async (): Promise<CliProcess> => {
    const p = new CliProcess([
      'serve',
      '--config',
      config.path,
      '--xds',
      `127.0.0.1:${xdsPort}`,
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
      '--session-key',
      TEST_SESSION_KEY,
      '--xds-token-file',
      tokenFile,
    ]);
    const ready = await p.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/);
    adminUrl = ready[1] as string;
    return p;
  };

  beforeAll(async () => {
    backends = await Promise.all(
      ['a', 'b', 'c'].map((n, i) => startEchoBackend({ address: `127.0.0.${i + 2}`, name: `app-${n}` })),
    );
    gatewayPort = await freePort();
    xdsPort = await freePort();
    writeFileSync(tokenFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
    config.write('gateway.yaml', gatewayYaml(gatewayPort));
    config.write('services.yaml', serviceYaml('app', backends));
    config.write('routes.yaml', routesYaml());
    serve = await startServe();
    envoys.push(
      ...(await startFleetEnvoys({ xdsPort, addresses: ENVOY_ADDRESSES, nodePrefix: 'envoy', tokenFile })),
    );
    urls.push(...ENVOY_ADDRESSES.map((address) => `http://${address}:${gatewayPort}`));
  }, 90_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await Promise.all(envoys.map((e) => e.stop()));
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
    rmSync(tokenFile, { force: true });
  });

  it('refuses to serve ADS beyond loopback without a token', async () => {
    const p = new CliProcess([
      'serve',
      '--config',
      config.path,
      '--xds',
      '0.0.0.0:0',
      '--session-key',
      TEST_SESSION_KEY,
    ]);
    expect((await p.exit).code).toBe(2);
    expect(p.output).toMatch(
      /--xds 0\.0\.0\.0:0 is reachable from other machines: give --xds-token-file FILE/,
    );
  });

  it('serves the routes on every Envoy', async () => {
    for (const url of urls) {
      await until(async () => (await getOnce(`${url}/cart/a`)).status === 200, 15_000, `${url} serving`);
      const res = await exchange(url, '/cart/a', 'shop.example');
      expect(res.status, res.body).toBe(200);
      expect((JSON.parse(res.body) as { instance: string }).instance).toMatch(/^app-/);
    }
  });

  it('continues a session sealed by one Envoy on the other', async () => {
    await expectSessionContinues(
      urls[0] as string,
      urls[1] as string,
      'shop.example',
      'cart-session',
      '/cart',
    );
  });

  it('brings a route change to every Envoy, and shows what each took', async () => {
    config.write('routes.yaml', routesYaml('/added'));
    const took = await Promise.all(
      urls.map((url) =>
        until(async () => (await getOnce(`${url}/added`)).status === 200, 15_000, `${url}/added served`),
      ),
    );
    // Measured here: the watcher's debounce, one compile and one push, well under a second.
    console.log(
      `route change served by both Envoys after ${took.map((t) => Math.round(t)).join(' and ')} ms`,
    );
    await until(
      async () => {
        const view = (await (await fetch(`${adminUrl}/v1/xds`)).json()) as {
          envoys: { node: string; kind: string; acked: Record<string, string>; nacked: unknown[] }[];
        };
        const versions = view.envoys.map((e) => new Set(Object.values(e.acked)));
        return (
          view.envoys.length === 2 &&
          versions.every((v) => v.size === 1) &&
          view.envoys.every((e) => e.nacked.length === 0)
        );
      },
      10_000,
      'both Envoys acknowledging one generation',
    );
    const view = (await (await fetch(`${adminUrl}/v1/xds`)).json()) as {
      envoys: { node: string; kind: string; acked: Record<string, string> }[];
    };
    expect(view.envoys.map((e) => e.node).sort()).toEqual(['envoy-0', 'envoy-1']);
    expect(view.envoys.map((e) => e.kind).sort()).toEqual([...ENVOY_ADDRESSES]);
    for (const e of view.envoys) {
      expect(Object.keys(e.acked).sort()).toEqual([
        'type.googleapis.com/envoy.config.cluster.v3.Cluster',
        'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
        'type.googleapis.com/envoy.config.listener.v3.Listener',
        'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
        // Delta streams (the default) take the virtual hosts apart (VHDS).
        'type.googleapis.com/envoy.config.route.v3.VirtualHost',
      ]);
    }
  });

  it('shows what an Envoy refused and why, while it keeps serving and the others take it', async () => {
    // Envoy-0 cannot bind this port on its address: something else holds it there.
    const blockedPort = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(blockedPort, ENVOY_ADDRESSES[0], resolve));
    try {
      config.write(
        'gateway.yaml',
        `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: ${gatewayPort} }
    - { name: more, protocol: HTTP, port: ${blockedPort} }
`,
      );
      type View = {
        envoys: {
          node: string;
          acked: Record<string, string>;
          nacked: { type: string; message: string }[];
        }[];
      };
      const view = async () => (await (await fetch(`${adminUrl}/v1/xds`)).json()) as View;
      await until(
        async () => (await view()).envoys.some((e) => e.node === 'envoy-0' && e.nacked.length > 0),
        15_000,
        'envoy-0 refusing the listener it cannot bind',
      );
      const refused = (await view()).envoys.find((e) => e.node === 'envoy-0');
      expect(refused?.nacked[0]?.type).toBe('type.googleapis.com/envoy.config.listener.v3.Listener');
      expect(refused?.nacked[0]?.message).toMatch(/bind|address/i);
      expect(serve.output).toMatch(/xds: "envoy-0" refused generation \d+ of Listener: .*cannot bind/);
      // The other Envoy serves the new listener; the one that refused keeps serving the old.
      await until(
        async () => (await getOnce(`http://${ENVOY_ADDRESSES[1]}:${blockedPort}/cart/x`)).status === 200,
        15_000,
        'envoy-1 serving the new listener',
      );
      expect((await getOnce(`${urls[0] as string}/cart/still`)).status).toBe(200);
    } finally {
      config.write('gateway.yaml', gatewayYaml(gatewayPort));
      await new Promise((resolve) => holder.close(resolve));
    }
    await until(
      async () => {
        const v = (await (await fetch(`${adminUrl}/v1/xds`)).json()) as { envoys: { nacked: unknown[] }[] };
        return v.envoys.every((e) => e.nacked.length === 0);
      },
      15_000,
      'every Envoy taking the generation without the blocked listener',
    );
  });

  it('loses no request while the control plane restarts', async () => {
    await expectNoLossWhileRestarting(`${urls[0] as string}/cart/load`, {}, async () => {
      serve.kill('SIGTERM');
      await serve.exit;
      serve = await startServe();
    });
    // The restarted control plane has both Envoys back on its stream.
    await until(
      async () =>
        ((await (await fetch(`${adminUrl}/v1/xds`)).json()) as { envoys: unknown[] }).envoys.length === 2,
      15_000,
      'both Envoys reconnected',
    );
  });
});
