// `node dist/bench/service-change-cost.js [routes] [changes] [profile.cpuprofile]`: the service thread's work per
// one-route change, in one process, without Envoys: `serve --xds`'s own parts (the file
// provider, the served configuration with its compiler thread, the ADS server) on bench:scale's
// routes, two lightweight ADS clients of two kinds (as bench:scale --fleet's two real Envoys on
// their own addresses), and one route added, edited and deleted in turn. Each change's stages
// come from the service's own timestamps (extproc/src/pipeline/load-times.ts, /v1/xds's
// `generation` and `pushes`), and the main thread's garbage collection from a `gc` observer.
// Prints each stage's median per kind of change, in ms; given a file, writes the main thread's
// CPU profile over the changes there (Chrome DevTools, speedscope). Numbers for an A/B in one
// sitting, never assertions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { TYPE_CLUSTER } from '../extproc/src/envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../extproc/src/envoy/xds-resources.js';
import { adsRunner } from '../extproc/src/cli/run/ads-runner.js';
import { epochMs } from '../extproc/src/pipeline/load-times.js';
import { FileProvider } from '../extproc/src/provider/file.js';
import { ServiceMetrics } from '../extproc/src/server/metrics.js';
import { ServedConfig } from '../extproc/src/server/served-config.js';
import type { XdsStatus } from '../extproc/src/xds/ads-server.js';
import { LightEnvoy } from './ads-light-client.js';
import { median } from './round-stats.js';
import { type Change, fileChanges } from './scale-changes.js';
import { writeScaleConfig } from './scale-config.js';
import { sleep } from './scale-process.js';

const KINDS = ['127.0.0.61', '127.0.0.62'] as const;
const routes = Number(process.argv[2] ?? 10_000);
const count = Number(process.argv[3] ?? 10);
const profileFile = process.argv[4];

/** Main-thread garbage collection, as [start, end] in epoch ms. */
const gcs: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const start = performance.timeOrigin + e.startTime;
    gcs.push([start, start + e.duration]);
  }
}).observe({ entryTypes: ['gc'] });

const gcWithin = (from: number, to: number): number =>
  gcs.reduce((sum, [s, e]) => sum + Math.max(0, Math.min(e, to) - Math.max(s, from)), 0);

async function until(what: string, check: () => boolean): Promise<void> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > 120_000) throw new Error(`${what}: not within 120 s`);
    await sleep(5);
  }
}

/** Every client took generation `version` and has nothing in flight. */
const delivered = (status: XdsStatus, version: string): boolean =>
  status.envoys.length === KINDS.length &&
  status.envoys.every((e) => e.inFlight === undefined && e.acked[TYPE_CLUSTER] === version);

type Stages = Record<string, number>;

/** Per generation, the process's CPU time (ms) over the ADS server's update. */
const updateCpuMs = new Map<number, number>();

/** One generation's stages on the service, in ms. */
function stagesOf(status: XdsStatus): Stages {
  const g = status.generation;
  const load = g?.load;
  if (!g || !load) throw new Error('no generation times');
  const kinds = KINDS.map((k) => g.kinds[k]);
  const lastSent = Math.max(...status.envoys.flatMap((e) => Object.values(e.pushes).map((p) => p.sentAt)));
  const out: Stages = {
    'read (provider)': load.readDoneAt - load.readAt,
    'read → the compiler thread took it': (load.threadAt ?? Number.NaN) - load.readDoneAt,
    'compiler thread': (load.threadDoneAt ?? Number.NaN) - (load.threadAt ?? Number.NaN),
    'its answer → back on the main thread':
      (load.receivedAt ?? Number.NaN) - (load.threadDoneAt ?? Number.NaN),
    'snapshot (table, IR ports, resolver)': load.builtAt - (load.receivedAt ?? Number.NaN),
    'swap → ADS update': g.updatedAt - load.builtAt,
  };
  kinds.forEach((k, i) => {
    out[`kind ${i + 1}: generate`] = (k?.generatedAt ?? Number.NaN) - (k?.startedAt ?? Number.NaN);
    out[`kind ${i + 1}: encode`] = (k?.encodedAt ?? Number.NaN) - (k?.generatedAt ?? Number.NaN);
  });
  out['update → last push sent'] = lastSent - g.updatedAt;
  out['main thread: snapshot + update + pushes'] =
    out['snapshot (table, IR ports, resolver)']! + lastSent - load.builtAt;
  out['GC on the main thread within it'] = gcWithin(load.receivedAt ?? load.builtAt, lastSent);
  out['change seen → last push sent'] = lastSent - (load.changedAt ?? Number.NaN);
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-service-cost-'));
  writeScaleConfig(dir, routes, { listener: 10080, backend: 18080 }, 'files');
  const provider = new FileProvider({ paths: [dir] });
  const config = new ServedConfig({ provider, metrics: new ServiceMetrics() });
  const runner = adsRunner(
    { address: '127.0.0.1:0', token: undefined, tls: undefined, insecure: false, wasmPath: 'steadfast.wasm' },
    config,
    { wasmPath: 'steadfast.wasm', sessionKeys: [Buffer.alloc(32, 7).toString('base64')] },
    () => {},
  );
  const clients: LightEnvoy[] = [];
  try {
    await config.start();
    // The process's CPU time over the ADS server's update (its listener runs between these two):
    // under a busy machine's load a better figure than the wall clock (GC helper threads count).
    let before = process.cpuUsage();
    config.onSwap(() => (before = process.cpuUsage()));
    const ads = await runner.start();
    config.onSwap((_snapshot, generation) => {
      const used = process.cpuUsage(before);
      updateCpuMs.set(generation, (used.user + used.system) / 1000);
    });
    for (const [i, kind] of KINDS.entries())
      clients.push(new LightEnvoy(ads.address, `envoy-${i}`, kind, '1.40.0'));
    // Every virtual host taken too (asked for once the route configurations were), then one
    // change of each kind before anything is counted.
    await until(
      'the first generation',
      () =>
        delivered(ads.status(), String(config.generation)) &&
        ads.status().envoys.every((e) => e.pushes[TYPE_VIRTUAL_HOST]?.answeredAt !== undefined),
    );
    const changes = fileChanges(dir, routes);
    const last = routes - 1;
    for (const make of [changes.add(routes), changes.edit(last, '/warm'), changes.remove(routes)]) {
      const before = config.generation;
      await make();
      await until(
        'a warm-up change',
        () => config.generation > before && delivered(ads.status(), String(config.generation)),
      );
    }
    const profiler = profileFile ? new Session() : undefined;
    profiler?.connect();
    await profiler?.post('Profiler.enable');
    await profiler?.post('Profiler.start');
    const byKind: Record<string, Stages[]> = { add: [], edit: [], delete: [] };
    for (let k = 0; k < count; k++) {
      const steps: [string, Change][] = [
        ['add', changes.add(routes)],
        ['edit', changes.edit(last, `/edited-${k}/${last}`)],
        ['delete', changes.remove(routes)],
      ];
      for (const [kind, make] of steps) {
        const before = config.generation;
        await make();
        await until(
          `${kind} ${k}`,
          () => config.generation > before && delivered(ads.status(), String(config.generation)),
        );
        byKind[kind]?.push({
          ...stagesOf(ads.status()),
          'CPU over the ADS update (process)': updateCpuMs.get(config.generation) ?? Number.NaN,
        });
        // A pause as the benchmark's between changes (it waits for all to settle, then polls).
        await sleep(200);
      }
    }
    if (profiler && profileFile) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
      profiler.disconnect();
    }
    const names = Object.keys(byKind['edit']?.[0] ?? {});
    const fmt = (xs: Stages[], n: string) =>
      (median(xs.map((s) => s[n] ?? Number.NaN)) ?? Number.NaN).toFixed(1);
    process.stdout.write(
      `service per one-route change, ${routes} routes, ${count} of each, median ms (at ${epochMs().toFixed(0)})\n`,
    );
    process.stdout.write(`| stage | added | edited | deleted |\n|---|---:|---:|---:|\n`);
    for (const n of names)
      process.stdout.write(
        `| ${n} | ${fmt(byKind['add'] ?? [], n)} | ${fmt(byKind['edit'] ?? [], n)} | ${fmt(byKind['delete'] ?? [], n)} |\n`,
      );
  } finally {
    for (const c of clients) c.close();
    await runner.stop();
    config.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`service-change-cost: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
