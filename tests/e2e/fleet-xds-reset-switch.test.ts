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
// Last, the change that tips deletes the routes of the other side, a probe among them: the
// bridge removes them before the head, so that probe answers 503, then 404, never 200.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { getOnce } from './support/bounded-load.js';
import { CliProcess } from './support/cli-process.js';
import { startFleetEnvoys, startXdsServe, until, xdsSettled } from './support/fleet.js';
import { ConfigDir, freePort, gatewayYaml, serviceYaml } from './support/gateway-fixture.js';

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

/** The probes, `retrying` fillers with retries, and `plain` more without (one of them a probe too). */
function mixed(retrying: number, plain: number): string[] {
  return [
    route('probe-retry', 'retry.probe', true),
    route('probe-plain', 'plain.probe', false),
    ...Array.from({ length: retrying }, (_, i) => route(`filler-${i}`, `f-${i}.example`, true)),
    ...(plain > 0 ? [route('probe-gone', 'gone.probe', false)] : []),
    ...Array.from({ length: plain - 1 }, (_, i) => route(`plain-${i}`, `p-${i}.example`, false)),
  ];
}

/** What each probe host must answer: the rule that retries 200, one that does not 503. */
const ANSWERS: Readonly<Record<string, readonly number[]>> = { 'retry.probe': [200], 'plain.probe': [503] };

describe('the reset switch tipped under traffic over delta ADS', () => {
  const config = new ConfigDir();
  let backend: RunningBackend;
  let serve: CliProcess;
  let envoy: EnvoyProcess;
  let adminUrl = '';
  let gatewayPort: number;
  let xdsPort: number;

  const startServe = async (): Promise<CliProcess> => {
    const started = await startXdsServe(config.path, xdsPort);
    adminUrl = started.adminUrl;
    return started.serve;
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

  /** Probes the hosts of `answers` from `LOOPS` loops while `during` runs: the answers that were wrong, and how many of each. */
  const underTraffic = async (during: () => Promise<void>, answers = ANSWERS) => {
    const wrong: string[] = [];
    const hosts = Object.keys(answers);
    const counts: Record<string, number> = Object.fromEntries(hosts.map((h) => [h, 0]));
    let running = true;
    const loop = async (host: string) => {
      while (running) {
        const status = await probe(host);
        counts[host] = (counts[host] ?? 0) + 1;
        if (!answers[host]?.includes(status)) wrong.push(`${host} answered ${status}`);
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, i) => loop(hosts[i % hosts.length] as string));
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

  it('nor when the change that tips it deletes routes: a deleted host never runs with the new switch', async () => {
    // Off, with 401 routes that retry and 601 that do not (the gone probe one of them).
    const offTable = mixed(400, 600);
    config.write('routes.yaml', ...offTable);
    await until(async () => (await probe('gone.probe')) === 503, 30_000, 'the mixed table served');
    await xdsSettled(adminUrl, 1);
    expect(await switchedOnForAll()).toBe(false);
    // Only the gone probe: it answers 503 while it exists, 404 once deleted, 200 never.
    const { wrong, counts } = await underTraffic(
      async () => {
        for (let round = 0; round < 3; round++) {
          // The plain routes deleted: most left retry, the switch goes on.
          config.write('routes.yaml', ...mixed(400, 0));
          await until(async () => await switchedOnForAll(), 30_000, 'the tip on taken');
          await xdsSettled(adminUrl, 1);
          config.write('routes.yaml', ...offTable);
          await until(async () => !(await switchedOnForAll()), 30_000, 'the tip off taken');
          await xdsSettled(adminUrl, 1);
        }
      },
      { 'gone.probe': [503, 404] },
    );
    expect(wrong).toEqual([]);
    expect(counts['gone.probe']).toBeGreaterThan(30);
  }, 300_000);
});
