// What the tests of a fleet of Envoys fed over ADS share: waiting for a condition with the
// time it took, starting Envoys from `steadfast envoy-config --xds`, checking that a session
// sealed by one Envoy continues on another, and restarting the control plane under load.
import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { type EnvoyProcess, startEnvoy } from '../../../extproc/src/local/envoy-process.js';
import { REPO_ROOT, steadfastBin } from '../../support/paths.js';
import { exchange } from '../conformance/exchange.js';
import { startBoundedLoad } from './bounded-load.js';
import { CliProcess } from './cli-process.js';
import { TEST_SESSION_KEY, cookieOf } from './gateway-fixture.js';

/** Polls until `check` holds; returns the milliseconds it took, or throws after `limitMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  limitMs: number,
  what: string,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`${what} not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the control plane's `/v1/xds` says of each Envoy (the fields the tests read). */
export interface XdsView {
  envoys: {
    node: string;
    acked: Record<string, string>;
    nacked: unknown[];
    inFlight?: string;
    delivered?: { version: string; at: number };
    withoutVirtualHosts?: true;
    sent: { resources: number; bytes: number };
    pushes?: Record<string, { version: string; answeredAt?: number }>;
  }[];
}

export async function xdsView(adminUrl: string): Promise<XdsView> {
  return (await (await fetch(`${adminUrl}/v1/xds`)).json()) as XdsView;
}

/** Every one of `count` Envoys connected, nothing in flight, nothing refused: the last generation delivered. */
export function xdsSettled(adminUrl: string, count: number): Promise<number> {
  return until(
    async () => {
      const v = await xdsView(adminUrl);
      return (
        v.envoys.length === count && v.envoys.every((e) => e.inFlight === undefined && e.nacked.length === 0)
      );
    },
    15_000,
    `${count} Envoys settled`,
  );
}

/** `steadfast serve --xds` on the configuration at `configPath`, sealing with the tests' session key; its admin URL once ready. */
export async function startXdsServe(
  configPath: string,
  xdsPort: number,
): Promise<{ serve: CliProcess; adminUrl: string }> {
  const serve = new CliProcess([
    ...['serve', '--config', configPath, '--xds', `127.0.0.1:${xdsPort}`],
    ...['--ext-proc-address', '127.0.0.1:0', '--admin-port', '0', '--session-key', TEST_SESSION_KEY],
  ]);
  const adminUrl = (await serve.waitFor(/ready; ext_proc on \S+; admin on (\S+); xds on (\S+)/))[1] as string;
  return { serve, adminUrl };
}

/** One Envoy per address, each from the bootstrap `envoy-config --xds` prints for it. */
export async function startFleetEnvoys(options: {
  readonly xdsPort: number;
  readonly addresses: readonly string[];
  readonly nodePrefix: string;
  readonly tokenFile?: string;
  /** Mutual TLS to the control plane: the Envoys' client certificate and key, and the control plane's CA. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
  /** `envoy-config --xds-protocol`. */
  readonly protocol?: 'sotw' | 'delta';
  /** More arguments for each Envoy (`--drain-time-s 1`). */
  readonly envoyArgs?: readonly string[];
}): Promise<EnvoyProcess[]> {
  const envoys: EnvoyProcess[] = [];
  for (const [i, address] of options.addresses.entries()) {
    const bootstrap = execFileSync(
      process.execPath,
      [
        steadfastBin(),
        'envoy-config',
        '--xds',
        `127.0.0.1:${options.xdsPort}`,
        '--address',
        address,
        '--envoy-admin-port',
        '0',
        '--node-id',
        `${options.nodePrefix}-${i}`,
        ...(options.tokenFile !== undefined ? ['--xds-token-file', options.tokenFile] : []),
        ...(options.protocol ? ['--xds-protocol', options.protocol] : []),
        ...(options.tls
          ? [
              '--xds-tls-cert',
              options.tls.cert,
              '--xds-tls-key',
              options.tls.key,
              '--xds-tls-ca',
              options.tls.ca,
            ]
          : []),
      ],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    envoys.push(
      await startEnvoy({ config: bootstrap, ...(options.envoyArgs ? { args: options.envoyArgs } : {}) }),
    );
  }
  return envoys;
}

/** A session sealed by the Envoy at `first` stays on its backend through the Envoy at `other`. */
export async function expectSessionContinues(
  first: string,
  other: string,
  host: string,
  cookieName: string,
  path: string,
): Promise<void> {
  const start = await exchange(first, `${path}/start`, host);
  expect(start.status).toBe(200);
  const cookie = cookieOf(start.headers['set-cookie'], cookieName);
  expect(cookie).toBeDefined();
  const pinned = (JSON.parse(start.body) as { instance: string }).instance;
  for (let i = 0; i < 8; i++) {
    const res = await exchange(other, `${path}/n${i}`, host, { cookie: cookie as string });
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { instance: string }).instance).toBe(pinned);
  }
}

/**
 * Restarts the control plane (`restart`) half a second into 4 s of load at 50 requests a
 * second on `url`, and expects every request answered.
 */
export async function expectNoLossWhileRestarting(
  url: string,
  headers: Readonly<Record<string, string>>,
  restart: () => Promise<void>,
): Promise<void> {
  const load = startBoundedLoad({ url, headers, ratePerSecond: 50, durationMs: 4000, maxRequests: 200 });
  await new Promise((r) => setTimeout(r, 500));
  await restart();
  const result = await load.done;
  expect(result.samples.length).toBeGreaterThan(150);
  expect(result.failed).toEqual([]);
}
