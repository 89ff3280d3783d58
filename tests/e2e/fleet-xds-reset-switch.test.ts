// The idempotent methods' `reset` switch said once per route configuration, tipped back and
// forth under traffic through a real Envoy over delta ADS (VHDS). A route configuration most of
// whose routes retry switches the `reset` filter on and every other route says off; one most of
// whose routes do not leaves it off and every retrying route says on (envoy/reset-default.ts).
// Envoy applies a route configuration over the virtual hosts it holds, so the control plane sends
// the hosts in their bridge form (every route saying its switch) before the changed route
// configuration (xds/ads-server.ts). Two probe hosts whose rules never change are asked all the
// while, each request's first attempt reset by the backend after it was read: a GET on the probe
// whose rule retries must always be retried (200), one on the probe whose rule does not must
// never be (503). The filler routes gain and lose their retries, tipping the balance each way
// three times; each tip is seen in the Envoy's own route configuration. Then the control plane
// is stopped, the balance tipped while it is away, and it is started again: the reconnecting
// Envoy says it holds the route configuration and its hosts, and gets the bridge first too.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, until, xdsSettled } from './support/fleet.js';
import {
  ConfigDir,
  TEST_SESSION_KEY,
  freePort,
  gatewayYaml,
  serviceYaml,
} from './support/gateway-fixture.js';

const ENVOY = '127.0.38.20';
const FILLERS = 1000;
const TIPS = 6;
const LOOPS = 8;
const RESET_FILTER = 'steadfast.idempotent-reset';

function route(name: string, host: string, retry: boolean): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  hostnames: ['${host}']
  rules:
    - matches: [{ path: { type: PathPrefix, value: / } }]
${retry ? '      retry: { attempts: 1 }\n' : ''}      backendRefs: [{ name: app, port: 80 }]
`;
}

/** The probes, and the fillers with or without retries. */
function routes(fillersRetry: boolean): string[] {
  return [
    route('probe-retry', 'retry.probe', true),
    route('probe-plain', 'plain.probe', false),
    ...Array.from({ length: FILLERS }, (_, i) => route(`filler-${i}`, `f-${i}.example`, fillersRetry)),
  ];
}

describe('the reset switch tipped under traffic over delta ADS', () => {
  const config = new ConfigDir();
  let backend: RunningBackend;
  let serve: CliProcess;
  let envoy: EnvoyProcess;
  let adminUrl = '';
  let gatewayPort: number;
  let xdsPort: number;

  const startServe = async (): Promise<CliProcess> => {
    const p = new CliProcess([
      ...['serve', '--config', config.path, '--xds', `127.0.0.1:${xdsPort}`],
      ...['--ext-proc-address', '127.0.0.1:0', '--admin-port', '0', '--session-key', TEST_SESSION_KEY],
    ]);
    adminUrl = (await p.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/))[1] as string;
    return p;
  };

  /** Whether the Envoy's route configuration switches the filter on for all. */
  const switchedOnForAll = async (): Promise<boolean> => {
    const dump = (await (
      await fetch(`${envoy.adminUrl}/config_dump?resource=dynamic_route_configs`)
    ).json()) as { configs?: { route_config?: { typed_per_filter_config?: Record<string, unknown> } }[] };
    const perFilter = dump.configs?.[0]?.route_config?.typed_per_filter_config ?? {};
    return RESET_FILTER in perFilter;
  };

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.38.3', name: 'reset-switch-app' });
    gatewayPort = await freePort();
    xdsPort = await freePort();
    config.write('gateway.yaml', gatewayYaml(gatewayPort));
    config.write('services.yaml', serviceYaml('app', [backend]));
    config.write('routes.yaml', ...routes(true));
    serve = await startServe();
    [envoy] = (await startFleetEnvoys({
      xdsPort,
      addresses: [ENVOY],
      nodePrefix: 'reset-switch',
      protocol: 'delta',
    })) as [EnvoyProcess];
    await xdsSettled(adminUrl, 1);
  }, 120_000);

  afterAll(async () => {
    serve?.kill('SIGTERM');
    await envoy?.stop();
    await backend?.close();
    config.remove();
  });

  /** One GET whose first attempt the backend resets after reading it: its status. */
  const probe = async (host: string): Promise<number> => {
    const query = `uuid=${randomUUID()}&succeedAfter=1&mode=reset`;
    return (await getOnce(`http://${ENVOY}:${gatewayPort}/p?${query}`, { host })).status;
  };

  /** Probes both hosts from `LOOPS` loops while `during` runs: the answers that were wrong, and how many of each. */
  const underTraffic = async (during: () => Promise<void>) => {
    const wrong: string[] = [];
    const counts = { 'retry.probe': 0, 'plain.probe': 0 };
    let running = true;
    const loop = async (host: 'retry.probe' | 'plain.probe') => {
      const expected = host === 'retry.probe' ? 200 : 503;
      while (running) {
        const status = await probe(host);
        counts[host]++;
        if (status !== expected) wrong.push(`${host} answered ${status}`);
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, i) => loop(i % 2 === 0 ? 'retry.probe' : 'plain.probe'));
    try {
      await during();
    } finally {
      running = false;
      await Promise.all(loops);
    }
    return { wrong, counts };
  };

  it('no request runs with the wrong switch while the balance tips each way', async () => {
    await until(async () => (await probe('retry.probe')) === 200, 15_000, 'the probes served');
    expect(await switchedOnForAll()).toBe(true);
    const { wrong, counts } = await underTraffic(async () => {
      for (let tip = 1; tip <= TIPS; tip++) {
        const on = tip % 2 === 0;
        config.write('routes.yaml', ...routes(on));
        await until(async () => (await switchedOnForAll()) === on, 30_000, `tip ${tip} taken`);
        await xdsSettled(adminUrl, 1);
      }
    });
    expect(wrong).toEqual([]);
    expect(counts['retry.probe']).toBeGreaterThan(TIPS * 10);
    expect(counts['plain.probe']).toBeGreaterThan(TIPS * 10);
  }, 300_000);

  it('nor when the balance tipped while the control plane was away', async () => {
    expect(await switchedOnForAll()).toBe(true);
    const { wrong, counts } = await underTraffic(async () => {
      serve.kill('SIGTERM');
      await serve.exit;
      config.write('routes.yaml', ...routes(false));
      serve = await startServe();
      await until(async () => !(await switchedOnForAll()), 30_000, 'the tip taken after the restart');
      await xdsSettled(adminUrl, 1);
    });
    expect(wrong).toEqual([]);
    expect(counts['retry.probe']).toBeGreaterThan(10);
    expect(counts['plain.probe']).toBeGreaterThan(10);
  }, 300_000);
});
