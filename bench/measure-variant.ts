// One measurement of one variant: a wrk run for throughput and CPU per request, then a
// fixed-rate run for latency, with the CPU Envoy and the control service used in each.
import { readFileSync } from 'node:fs';
import { runOpenLoop, type OpenLoopResult } from './open-loop-client.js';
import { CpuMeter } from './process-cpu.js';
import { BENCH_PATH, startVariant, type VariantEnvironment } from './running-variant.js';
import { SystemCpuMeter } from './system-cpu.js';
import type { Variant } from './variants.js';
import { runWrk } from './wrk.js';

export interface MeasureSettings {
  readonly connections: number;
  readonly warmupS: number;
  readonly durationS: number;
  /** The fixed rate of the latency run, requests per second. */
  readonly rate: number;
  readonly latencyWarmupMs: number;
  readonly latencyDurationMs: number;
  readonly latencyConnections: number;
}

export interface Measurement {
  readonly variant: string;
  readonly round: number;
  readonly rps: number;
  readonly wrkErrors: number;
  readonly envoyCpuUsPerReq?: number;
  readonly controlCpuUsPerReq?: number;
  readonly latency: OpenLoopResult;
  readonly envoyCpuUsPerReqAtRate?: number;
  readonly controlCpuUsPerReqAtRate?: number;
  /** CPU other programs used during the latency run, per cent of the machine. */
  readonly othersCpuPercent?: number;
  readonly filterCounters: Readonly<Record<string, number>>;
  /** Envoy's resident memory after the throughput run, MiB (one worker: `--concurrency 1`). */
  readonly envoyRssMiB?: number;
}

/** A process's resident set, MiB, from /proc; undefined where there is none. */
function residentMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const perRequest = (us: number | undefined, requests: number): number | undefined =>
  us === undefined || requests === 0 ? undefined : us / requests;

export async function measureVariant(
  v: Variant,
  round: number,
  env: VariantEnvironment,
  s: MeasureSettings,
): Promise<Measurement> {
  const running = await startVariant(v, env);
  try {
    const url = `http://${running.host}:${running.port}${BENCH_PATH}`;
    const wrk = { url, connections: s.connections, headers: running.headers, pin: env.pinning.driver };
    await runWrk({ ...wrk, durationS: s.warmupS });
    const pids = [running.envoyPid, running.controlPid];
    const meter = new CpuMeter(pids);
    const load = await runWrk({ ...wrk, durationS: s.durationS });
    const [envoyUs, controlUs] = meter.read();
    const envoyRssMiB = residentMiB(running.envoyPid);

    let atRate: CpuMeter | undefined;
    let system: SystemCpuMeter | undefined;
    let ownStart = process.cpuUsage();
    let atRateUs: Array<number | undefined> = [];
    let othersCpuPercent: number | undefined;
    const latency = await runOpenLoop({
      host: running.host,
      port: running.port,
      path: BENCH_PATH,
      headers: running.headers,
      rate: s.rate,
      warmupMs: s.latencyWarmupMs,
      durationMs: s.latencyDurationMs,
      connections: s.latencyConnections,
      onMeasureStart: () => {
        atRate = new CpuMeter([...pids, env.backendPid, ...(env.ownPids ?? [])]);
        system = new SystemCpuMeter();
        ownStart = process.cpuUsage();
      },
      onMeasureEnd: () => {
        atRateUs = atRate?.read() ?? [];
        const own = process.cpuUsage(ownStart);
        const accounted = atRateUs.reduce<number>((a, us) => a + (us ?? 0), own.user + own.system);
        othersCpuPercent = system?.othersPercent(accounted);
      },
    });
    const counters = await running.filterCounters();
    for (const name of v.expectCounters ?? []) {
      if (!((counters.get(name) ?? 0) > 0)) {
        throw new Error(
          `${v.id} (${v.name}): the filter counter ${name} did not move, so the setup does not do what it claims; ` +
            `counters: ${JSON.stringify(Object.fromEntries(counters))}`,
        );
      }
    }
    const completedAtRate = latency.completed;
    return {
      variant: v.id,
      round,
      rps: load.rps,
      wrkErrors: load.errors,
      ...optional('envoyCpuUsPerReq', perRequest(envoyUs, load.requests)),
      ...optional('controlCpuUsPerReq', perRequest(controlUs, load.requests)),
      latency,
      ...optional('envoyCpuUsPerReqAtRate', perRequest(atRateUs[0], completedAtRate)),
      ...optional('controlCpuUsPerReqAtRate', perRequest(atRateUs[1], completedAtRate)),
      ...optional('othersCpuPercent', othersCpuPercent),
      filterCounters: Object.fromEntries(counters),
      ...optional('envoyRssMiB', envoyRssMiB),
    };
  } finally {
    await running.stop();
  }
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}
