// The fleet `bench:scale --fleet` measures: `steadfast serve --xds` on N routes (files, or a
// real API server), real Envoys from `envoy-config --xds … --xds-protocol delta`, each on a
// loopback address of its own, and lightweight ADS clients in this process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { type EnvoyProcess, startEnvoy } from '../extproc/src/local/envoy-process.js';
import { epochMs } from '../extproc/src/pipeline/load-times.js';
import { LightEnvoy } from './ads-light-client.js';
import {
  type Changes,
  fileChanges,
  kubeChanges,
  kubeSource,
  startKubeWith,
  stopKube,
} from './scale-changes.js';
import { type Provider, writeScaleConfig } from './scale-config.js';
import { type Cli, ROOT, freePort, startCli, status, stopCli, until } from './scale-process.js';

/** The real Envoys' listener addresses (no test uses these): two for the fleet, one joining later. */
export const REAL_ENVOY_ADDRESSES = ['127.0.0.61', '127.0.0.62'] as const;
export const NEW_ENVOY_ADDRESS = '127.0.0.63';

export interface Fleet {
  readonly n: number;
  readonly provider: Provider;
  readonly dir: string;
  readonly kube: LocalKube | undefined;
  readonly changes: Changes;
  readonly cli: Cli;
  readonly adminPort: number;
  readonly xdsPort: number;
  readonly listenerPort: number;
  /** How long any one wait may take (generous: a small machine at 10,000 routes). */
  readonly limitMs: number;
  /** When `serve` was started (performance.now()). */
  readonly startedAt: number;
  readonly real: { readonly address: string; readonly node: string; readonly envoy: EnvoyProcess }[];
  readonly light: LightEnvoy[];
}

/** The directory, the API server if asked for, and `serve --xds` started on them (not yet ready), its Node given `nodeArgs`. */
export async function startControlPlane(
  n: number,
  backendPort: number,
  provider: Provider,
  nodeArgs: readonly string[] = [],
): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), `steadfast-scale-fleet-${n}-`));
  const [listenerPort, adminPort, xdsPort] = [await freePort(), await freePort(), await freePort()];
  writeScaleConfig(dir, n, { listener: listenerPort, backend: backendPort }, provider);
  const kube = provider === 'kubernetes' ? await startKubeWith(dir) : undefined;
  const source = kube ? kubeSource(kube) : ['--config', dir];
  const sessionKey = Buffer.alloc(32, 7).toString('base64');
  const startedAt = performance.now();
  // With an inspector: memory is compared after a full GC (inspector-gc.ts).
  const cli = startCli(
    [
      ...['serve', ...source, '--xds', `127.0.0.1:${xdsPort}`, '--session-key', sessionKey],
      ...['--admin-port', String(adminPort), '--ext-proc-address', '127.0.0.1:0'],
    ],
    ['--inspect=127.0.0.1:0', ...nodeArgs],
  );
  return {
    n,
    provider,
    dir,
    kube,
    changes: kube ? kubeChanges(kube) : fileChanges(dir, n),
    cli,
    adminPort,
    xdsPort,
    listenerPort,
    limitMs: Math.max(120_000, n * 20),
    startedAt,
    real: [],
    light: [],
  };
}

export async function stopFleet(fleet: Fleet): Promise<void> {
  for (const c of fleet.light) c.close();
  fleet.changes.close();
  await Promise.all(fleet.real.map((r) => r.envoy.stop()));
  await stopCli(fleet.cli.child);
  await stopKube(fleet.kube);
  rmSync(fleet.dir, { recursive: true, force: true });
}

/** A real Envoy from the bootstrap `envoy-config --xds` prints for it, listening on `address`. */
export async function startRealEnvoy(fleet: Fleet, address: string, node: string): Promise<EnvoyProcess> {
  const bootstrap = execFileSync(
    process.execPath,
    [
      ...[join(ROOT, 'bin', 'steadfast.js'), 'envoy-config', '--xds', `127.0.0.1:${fleet.xdsPort}`],
      ...['--xds-protocol', 'delta', '--address', address, '--envoy-admin-port', '0', '--node-id', node],
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  // Behind the guard: the Envoy stops if the benchmark dies.
  return startEnvoy({ config: bootstrap, guard: { removeOnOrphan: [] }, readyTimeoutMs: fleet.limitMs });
}

/** Lightweight clients, each a stream of its own, listening (they say) where the first real Envoy does. */
/** A real Envoy that joins the fleet (and its figures). */
export async function addRealEnvoy(fleet: Fleet, address: string): Promise<void> {
  const node = `envoy-${fleet.real.length}`;
  fleet.real.push({ address, node, envoy: await startRealEnvoy(fleet, address, node) });
}

export function connectLightClients(fleet: Fleet, count: number): void {
  const release = envoyVersion();
  for (let i = 0; i < count; i++)
    fleet.light.push(
      new LightEnvoy(`127.0.0.1:${fleet.xdsPort}`, `light-${i}`, REAL_ENVOY_ADDRESSES[0], release),
    );
}

/** Whether route-i answers `want` on `path` through the Envoy listening on `address`. */
export async function answers(
  fleet: Fleet,
  address: string,
  i: number,
  path: string,
  want: number,
): Promise<boolean> {
  return (await status(fleet.listenerPort, `svc-${i}.example`, path, address)) === want;
}

/** When route-i first answered `want` on `path` through each real Envoy (epoch ms, in the fleet's order). */
export async function servedOnEachEnvoy(
  fleet: Fleet,
  i: number,
  path: string,
  want: number,
): Promise<number[]> {
  return Promise.all(
    fleet.real.map(async (r) => {
      await until(
        `route-${i} ${path} → ${want} on ${r.address}`,
        fleet.limitMs,
        () => answers(fleet, r.address, i, path, want),
        fleet.cli.alive,
      );
      return epochMs();
    }),
  );
}

/** Seconds until route-i answers `want` on `path` through every real Envoy (the slowest one's). */
export async function untilOnEveryEnvoy(
  fleet: Fleet,
  i: number,
  path: string,
  want: number,
): Promise<number> {
  const started = epochMs();
  const served = await servedOnEachEnvoy(fleet, i, path, want);
  return (Math.max(...served) - started) / 1000;
}
