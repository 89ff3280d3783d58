// `npm run bench`: plain Envoy against Envoy with steadfast in each mode, on this machine,
// in interleaved rounds — throughput (wrk), latency at a fixed rate (an open-loop client),
// CPU per request — plus the filter's own cost in the emulator. Writes bench/results/ and
// the Performance section of README.md. Numbers, never assertions: no test runs this.
//
//   npm run bench                       the full run (about 12 minutes on 2 CPUs)
//   npm run bench -- --quick            one short round, nothing written
//   npm run bench -- --rounds 3 --duration 5 --only V1,V3
//   npm run bench -- --nice 0           Envoy and the control service at normal priority
//   npm run bench -- --no-keep-awake    let idle CPUs sleep (see keep-awake.ts)
//   npm run bench -- --rate-percent 25 --label quarter-rate
//                                       latency at a quarter of plain Envoy's throughput, written
//                                       to bench/results/<date>-quarter-rate.{json,md} only
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { envoyBinary, envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { goals, variantReports, type BenchReport } from './bench-report.js';
import { planCpuPinning, type CpuPinning } from './cpu-pinning.js';
import { measureFilterCost, type FilterCase } from './filter-cost.js';
import { keepCpusAwake, type KeepAwake } from './keep-awake.js';
import { measureVariant, type Measurement, type MeasureSettings } from './measure-variant.js';
import { startBackendProcess } from './backend-process.js';
import { CpuMeter } from './process-cpu.js';
import { writeResults } from './results-files.js';
import { resultsTable } from './results-table.js';
import { BENCH_PATH, startVariant, stopEverything, type VariantEnvironment } from './running-variant.js';
import { benchVariants, type Variant } from './variants.js';
import { runWrk, wrkVersion } from './wrk.js';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '8' },
    'latency-duration': { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    nice: { type: 'string', default: '-10' },
    'rate-percent': { type: 'string', default: '50' },
    label: { type: 'string' },
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'no-keep-awake': { type: 'boolean', default: false },
  },
});

function bounded(name: string, text: string | undefined, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${name} must be an integer in ${min}-${max}`);
  return n;
}

const quick = opts.quick === true;
const rounds = quick ? 1 : bounded('rounds', opts.rounds, 1, 20);
const durationS = quick ? 3 : bounded('duration', opts.duration, 1, 60);
const latencyS = quick ? 2 : bounded('latency-duration', opts['latency-duration'], 1, 60);
const connections = bounded('connections', opts.connections, 1, 1000);
const write = !quick && opts['no-write'] !== true;
const label = opts.label;
if (label !== undefined && !/^[a-z0-9-]{1,40}$/.test(label))
  throw new Error('--label must be kebab-case, 1-40 characters');
const ratePercent = bounded('rate-percent', opts['rate-percent'], 1, 100);
const nice = -bounded('nice', String(-Number(opts.nice)), 0, 20);

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return m?.[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function nproc(): number {
  const r = spawnSync('nproc', [], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : availableParallelism();
}

const log = (line: string): void => console.log(line);
/** The keep-awake spinners while they run, so an interrupted run stops them too. */
let awake: KeepAwake | undefined;
const fmt = (x: number, d = 0): string =>
  x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main(): Promise<void> {
  const root = projectRoot();
  const wrk = wrkVersion();
  const envoy = envoyVersion(envoyBinary());
  const wasmPath = join(root, 'filter', 'build', 'steadfast.wasm');
  const nativePath = join(root, 'filter', 'build', 'libsteadfast.so');
  if (
    !existsSync(wasmPath) ||
    !existsSync(nativePath) ||
    !existsSync(join(root, 'dist', 'extproc', 'src', 'cli', 'main.js'))
  )
    throw new Error(
      'the filter (both builds) or the control service is not built: run `npm run build` (npm run bench does)',
    );
  const cpus = nproc(); // before this process is pinned to one CPU, which nproc would then report
  const pinning = planCpuPinning(nice);
  const machine = {
    nproc: cpus,
    cpu_model: cpuModel(),
    kernel: release(),
    node: process.version,
    wrk,
    pinned: pinning.pinned,
    pinning: pinning.why,
    sut_nice: pinning.sutNice,
    loadavg_1m_at_start: Number(loadavg()[0]?.toFixed(2)),
  };
  log(`steadfast benchmark: Envoy ${envoy}, wrk ${wrk}, node ${process.version}`);
  log(
    `machine: ${machine.nproc} × ${machine.cpu_model}; ${pinning.why}; load average ${machine.loadavg_1m_at_start}`,
  );

  log('\nthe filter in the proxy-wasm emulator, one request at a time:');
  const filter = await measureFilterCost(wasmPath);
  for (const f of filter) {
    log(
      `  ${f.name.padEnd(32)} ${fmt(f.hostCallsPerRequest, 1).padStart(5)} host calls  ` +
        `${fmt(f.wasmNsPerRequest).padStart(7)} ns in the filter  ${fmt(f.nsPerRequest).padStart(7)} ns with the emulator`,
    );
  }

  // Spinners at the lowest priority on both CPUs, bounded by the longest a run may take.
  awake = pinning.pinned && opts['no-keep-awake'] !== true ? keepCpusAwake([0, 1], 3600) : undefined;
  log(awake ? 'idle CPUs kept awake by SCHED_IDLE spinners (keep-awake.ts)' : 'idle CPUs may sleep');
  try {
    await runAll(root, envoy, pinning, { ...machine, keep_awake: awake !== undefined }, filter, awake);
  } finally {
    await awake?.stop();
  }
}

async function runAll(
  root: string,
  envoy: string,
  pinning: CpuPinning,
  machine: Record<string, string | number | boolean>,
  filter: FilterCase[],
  awake: KeepAwake | undefined,
): Promise<void> {
  const wasmPath = join(root, 'filter', 'build', 'steadfast.wasm');
  const addresses = ['127.0.0.2', '127.0.0.3'];
  // Which backend costs less per request: measured, not assumed. The benchmark uses the minimal one.
  const backends: Record<string, unknown> = { used: 'minimal' };
  for (const [kind, address] of [
    ['minimal', '127.0.0.5'],
    ['echo', '127.0.0.6'],
  ] as const) {
    const b = await startBackendProcess(root, kind, [address], pinning.driver);
    try {
      const url = `http://${address}:${b.port}/bench`;
      await runWrk({ url, connections, durationS: 1, pin: pinning.driver });
      const meter = new CpuMeter([b.pid]);
      const r = await runWrk({ url, connections, durationS: 3, pin: pinning.driver });
      const us = meter.read()[0];
      const perRequest = us === undefined ? null : us / r.requests;
      backends[kind] = { rps: Math.round(r.rps), cpu_us_per_req: perRequest };
      log(
        `backend ${kind}: ${fmt(r.rps)} requests/s direct, ` +
          `${perRequest === null ? '?' : fmt(perRequest, 1)} µs CPU per request`,
      );
    } finally {
      await b.stop();
    }
  }
  const backend = await startBackendProcess(root, 'minimal', addresses, pinning.driver);
  try {
    const env: VariantEnvironment = {
      root,
      wasmPath,
      nativePath: join(root, 'filter', 'build', 'libsteadfast.so'),
      backendAddresses: addresses,
      backendPort: backend.port,
      backendPid: backend.pid,
      ownPids: awake?.pids ?? [],
      pinning,
    };
    const all = benchVariants({ root, sessionKey: randomBytes(32).toString('base64') });
    const only = opts.only?.split(',').map((s) => s.trim());
    const variants = all.filter((v) => v.id === 'V1' || !only || only.includes(v.id));
    const v1 = variants.find((v) => v.id === 'V1') as Variant;

    // The latency runs' rate: half of what plain Envoy carries, measured now on this machine.
    // The best of three short runs: on a shared machine, the least disturbed one is the capacity.
    const plain = await startVariant(v1, env);
    let capacity = 0;
    try {
      const url = `http://${plain.host}:${plain.port}${BENCH_PATH}`;
      await runWrk({ url, connections, durationS: 1, pin: pinning.driver });
      for (let i = 0; i < 3; i++) {
        const r = await runWrk({ url, connections, durationS: 3, pin: pinning.driver });
        capacity = Math.max(capacity, r.rps);
      }
    } finally {
      await plain.stop();
    }
    const rate = Math.max(100, Math.round((capacity * ratePercent) / 100 / 100) * 100);
    log(`\nplain Envoy carries up to ${fmt(capacity)} requests/s; latency runs at ${fmt(rate)} requests/s\n`);

    const settings: MeasureSettings = {
      connections,
      warmupS: 1,
      durationS,
      rate,
      latencyWarmupMs: 1000,
      latencyDurationMs: latencyS * 1000,
      latencyConnections: 64,
    };
    const measurements: Measurement[] = [];
    const started = Date.now();
    for (let round = 0; round < rounds; round++) {
      // Each round starts at a different variant, so none is always first or last.
      const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
      for (const v of order) {
        const m = await measureVariant(v, round, env, settings);
        measurements.push(m);
        const cpu =
          m.envoyCpuUsPerReq === undefined
            ? ''
            : `  CPU ${fmt(m.envoyCpuUsPerReq, 1)}${m.controlCpuUsPerReq === undefined ? '' : ` + ${fmt(m.controlCpuUsPerReq, 1)}`} µs/req`;
        log(
          `round ${round + 1}/${rounds} ${v.id} ${v.name.padEnd(24)} ${fmt(m.rps).padStart(7)} req/s` +
            `  p50 ${fmt(m.latency.p50Us).padStart(6)}  p90 ${fmt(m.latency.p90Us).padStart(6)}  p99 ${fmt(m.latency.p99Us).padStart(6)} µs` +
            `${cpu}${m.wrkErrors + m.latency.errors > 0 ? `  errors ${m.wrkErrors + m.latency.errors}` : ''}` +
            `${m.latency.firstError ? ` (${m.latency.firstError})` : ''}` +
            `${m.othersCpuPercent === undefined ? '' : `  others ${fmt(m.othersCpuPercent)}% CPU`}`,
        );
      }
    }
    log(`\n${rounds} rounds in ${fmt((Date.now() - started) / 60_000, 1)} minutes`);

    const variantsReport = variantReports(variants, measurements, rounds);
    const report: BenchReport = {
      date: new Date().toISOString(),
      machine: { ...machine, loadavg_1m_at_end: Number(loadavg()[0]?.toFixed(2)) },
      envoy,
      rounds,
      method: {
        throughput: `wrk -t1 -c${connections} -d${durationS}s after a 1 s warm-up`,
        latency: `open-loop client (bench/open-loop-client.ts), ${settings.latencyConnections} keep-alive connections; a request that waited for a connection counts from its due time, others from when written; ${latencyS} s after a 1 s warm-up`,
        latency_rate_rps: rate,
        latency_rate_percent: ratePercent,
        cpu: '/proc/<pid>/stat utime+stime of Envoy and the control service over the wrk run, per request',
        envoy_args: '--concurrency 1',
        backend: 'bench/minimal-backend.ts on 127.0.0.2 and 127.0.0.3, a process of its own',
      },
      variants: variantsReport,
      goals: goals(variantsReport),
      filter,
      backends,
      measurements,
    };
    const table = resultsTable(report);
    log(`\n${table}`);
    if (write) for (const line of writeResults(root, report, table, label)) log(line);
  } finally {
    await backend.stop();
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`steadfast benchmark: ${signal}, stopping Envoy and the control service`);
    void Promise.allSettled([stopEverything(), awake?.stop()]).finally(() => process.exit(130));
  });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(`steadfast benchmark: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
