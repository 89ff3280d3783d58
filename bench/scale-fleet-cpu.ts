// Where the machine went during one change of `bench:scale --fleet`, beyond the control plane's
// own timestamps: the CPU each part used between the change's start and both real Envoys serving
// it (steadfast's service and compiler threads, the API server and etcd, each real Envoy, this
// process with its lightweight clients, the whole machine), from /proc; and the garbage
// collections on steadfast's two threads in that window, from a perf_hooks 'gc' observer put
// there through the inspector `serve` runs with. A change slower than the others then says
// whether it waited for steadfast, for another process, or for a machine busy with other work.
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { median } from './round-stats.js';
import { inThreads } from './inspector-gc.js';
import { descendants, envoyPid } from './scale-process.js';

/** The processes and threads whose CPU is read. */
export interface FleetParts {
  /** steadfast: its process, and its compiler thread (a worker) when it has one. */
  readonly steadfast: number;
  readonly compilerTid?: number;
  readonly apiServer?: number;
  readonly etcd?: number;
  /** Each real Envoy, in the fleet's order. */
  readonly envoys: readonly (number | undefined)[];
}

/** CPU used over one change, in ms (undefined: not readable); the window's own length too. */
export interface ChangeCpu {
  readonly windowMs: number;
  /** steadfast's main thread: the providers, the snapshot, the ADS server, status writes. */
  readonly service?: number;
  readonly compiler?: number;
  /** steadfast's other threads: V8's GC helpers (both isolates'), libuv's pool, the inspector. */
  readonly steadfastOther?: number;
  readonly apiServer?: number;
  readonly etcd?: number;
  readonly envoys: readonly (number | undefined)[];
  /** This process: the polling, the change itself, the lightweight clients' decoding. */
  readonly bench?: number;
  /** Every CPU of the machine, busy time (10 ms resolution per CPU). */
  readonly machine?: number;
  /**
   * How long a thread was ready to run but waited for a CPU (schedstat's run-queue wait):
   * steadfast's two threads, and each Envoy's main thread (which applies an update).
   */
  readonly waited?: {
    readonly service?: number;
    readonly compiler?: number;
    readonly envoys: readonly (number | undefined)[];
  };
}

/** Garbage collections of one thread within a change's window (their pauses, ms). */
export interface GcSummary {
  readonly count: number;
  readonly ms: number;
  /** Mark-compact: its final pause and its incremental marking steps. */
  readonly majors: number;
  readonly majorMs: number;
  readonly longest: number;
}

export interface ChangeGc {
  readonly service: GcSummary;
  readonly compiler: GcSummary;
  /**
   * How much each thread's old space grew since the last change was read, in MiB, when no major
   * GC came between (what a change cycle leaves there, which a major GC will have to collect).
   */
  readonly oldGrowth?: { readonly service?: number; readonly compiler?: number };
}

/** Each thread's old space in use at the last reading (bytes): the next reading's growth is from it. */
export interface OldSpace {
  service?: number;
  compiler?: number;
}

/** A thread's time so far on a CPU and waiting for one, in ns (schedstat), or undefined. */
function taskNs(pid: number, tid: number): { run: number; wait: number } | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
    return run !== undefined && wait !== undefined && Number.isFinite(run + wait) ? { run, wait } : undefined;
  } catch {
    return undefined;
  }
}

/** A process's CPU so far in ns, its threads' together (a thread gone since is not counted). */
function processNs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  return tids.reduce((sum, tid) => sum + (taskNs(pid, Number(tid))?.run ?? 0), 0);
}

/** The machine's busy time so far, all CPUs, in ms (/proc/stat is in USER_HZ, 100 a second). */
function machineMs(): number | undefined {
  try {
    const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const busy = f.slice(0, 8).reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0);
    return Number.isFinite(busy) ? busy * 10 : undefined;
  } catch {
    return undefined;
  }
}

type Thread = { run: number; wait: number } | undefined;

interface Sample {
  readonly at: number;
  readonly service: Thread;
  readonly compiler: Thread;
  readonly envoyMains: readonly Thread[];
  /** ns, but the machine's ms. */
  readonly steadfast?: number;
  readonly apiServer?: number;
  readonly etcd?: number;
  readonly bench?: number;
  readonly machine?: number;
  readonly envoys: readonly (number | undefined)[];
}

function sample(parts: FleetParts): Sample {
  const { steadfast, compilerTid } = parts;
  return {
    at: performance.now(),
    service: taskNs(steadfast, steadfast),
    compiler: compilerTid === undefined ? undefined : taskNs(steadfast, compilerTid),
    envoyMains: parts.envoys.map((pid) => (pid === undefined ? undefined : taskNs(pid, pid))),
    steadfast: processNs(steadfast),
    apiServer: processNs(parts.apiServer),
    etcd: processNs(parts.etcd),
    bench: processNs(process.pid),
    machine: machineMs(),
    envoys: parts.envoys.map(processNs),
  };
}

const between = (a: number | undefined, b: number | undefined, per = 1e6): number | undefined =>
  a === undefined || b === undefined ? undefined : (b - a) / per;

/** Started before a change, read once it is served: each part's CPU in between. */
export class ChangeCpuMeter {
  private readonly before: Sample;

  constructor(private readonly parts: FleetParts) {
    this.before = sample(parts);
  }

  read(): ChangeCpu {
    const [a, b] = [this.before, sample(this.parts)];
    const service = between(a.service?.run, b.service?.run);
    const compiler = between(a.compiler?.run, b.compiler?.run);
    const all = between(a.steadfast, b.steadfast);
    return {
      windowMs: b.at - a.at,
      service,
      compiler,
      steadfastOther: all === undefined ? undefined : all - (service ?? 0) - (compiler ?? 0),
      apiServer: between(a.apiServer, b.apiServer),
      etcd: between(a.etcd, b.etcd),
      bench: between(a.bench, b.bench),
      machine: between(a.machine, b.machine, 1),
      envoys: b.envoys.map((x, i) => between(a.envoys[i], x)),
      waited: {
        service: between(a.service?.wait, b.service?.wait),
        compiler: between(a.compiler?.wait, b.compiler?.wait),
        envoys: b.envoyMains.map((x, i) => between(a.envoyMains[i]?.wait, x?.wait)),
      },
    };
  }
}

/**
 * Installed on each of steadfast's threads once: a 'gc' observer logging [start (epoch ms),
 * duration, kind]; it answers the thread's id (/proc/thread-self is `PID/task/TID`).
 */
const GC_LOG = '__steadfastBenchGc';
const INSTALL = `(() => {
  if (!globalThis.${GC_LOG}) {
    const log = (globalThis.${GC_LOG} = []);
    const { PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
    globalThis.${GC_LOG}Observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) log.push([performance.timeOrigin + e.startTime, e.duration, e.detail?.kind ?? 0]);
    });
    globalThis.${GC_LOG}Observer.observe({ entryTypes: ['gc'] });
  }
  return JSON.stringify(Number(process.getBuiltinModule('node:fs').readlinkSync('/proc/thread-self').split('/').pop()));
})()`;
/** What each thread logged since the last read, taken out of its log (which so stays small). */
// On the thread's next turn: entries reach the observer a turn after their GC, so one that ended
// just before the change's end is in the log then.
const TAKE = `new Promise((resolve) => setImmediate(() => resolve(JSON.stringify({
  gcs: (globalThis.${GC_LOG} ?? []).splice(0),
  old: process.getBuiltinModule('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0,
}))))`;
interface Taken {
  readonly gcs: GcEntry[];
  /** Old space in use now, bytes. */
  readonly old: number;
}

type GcEntry = readonly [start: number, duration: number, kind: number];

/** perf_hooks' kinds: NODE_PERFORMANCE_GC_MAJOR and _INCREMENTAL (marking steps of a major one). */
const MAJOR_KINDS = new Set([4, 8]);

/** The parts of the fleet: steadfast's threads (observed from now on), the API server, etcd, the Envoys. */
export async function fleetParts(
  inspector: string,
  envoyGuards: readonly (number | undefined)[],
): Promise<FleetParts> {
  const [main, ...workers] = (await inThreads(inspector, INSTALL)) as number[];
  if (main === undefined) throw new Error('serve: no thread id through its inspector');
  const named = (comm: string) =>
    descendants(process.pid).find((p) => {
      try {
        return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
      } catch {
        return false;
      }
    });
  return {
    steadfast: main,
    // The one worker `serve --xds` runs is its compiler thread.
    ...(workers.length === 1 ? { compilerTid: workers[0] } : {}),
    apiServer: named('kube-apiserver'),
    etcd: named('etcd'),
    envoys: envoyGuards.map((g) => (g === undefined ? undefined : envoyPid(g))),
  };
}

function summary(entries: readonly GcEntry[], from: number, to: number): GcSummary {
  const within = entries.filter(([s, d]) => s + d >= from && s <= to);
  const pause = ([s, d]: GcEntry) => Math.min(s + d, to) - Math.max(s, from);
  const majors = within.filter(([, , kind]) => MAJOR_KINDS.has(kind));
  return {
    count: within.length,
    ms: within.reduce((sum, e) => sum + pause(e), 0),
    majors: majors.length,
    majorMs: majors.reduce((sum, e) => sum + pause(e), 0),
    longest: Math.max(0, ...within.map(([, d]) => d)),
  };
}

/** The collections on steadfast's threads between `from` and `to` (epoch ms); what came before is let go. */
export async function changeGc(
  inspector: string,
  from: number,
  to: number,
  last: OldSpace,
): Promise<ChangeGc> {
  const [main, worker] = (await inThreads(inspector, TAKE)) as (Taken | undefined)[];
  const growth = (now: Taken | undefined, was: number | undefined) =>
    now === undefined || was === undefined || now.gcs.some(([, , kind]) => kind === 4)
      ? undefined
      : (now.old - was) / (1024 * 1024);
  const oldGrowth = { service: growth(main, last.service), compiler: growth(worker, last.compiler) };
  last.service = main?.old;
  last.compiler = worker?.old;
  return {
    service: summary(main?.gcs ?? [], from, to),
    compiler: summary(worker?.gcs ?? [], from, to),
    oldGrowth,
  };
}

/** Each part's median over changes (ms), and how many changes had a major GC on each thread. */
export interface CpuMedians {
  readonly changes: number;
  readonly cpu: ChangeCpu;
  /** The machine's busy time the parts do not account for (othersMs). */
  readonly others?: number;
  readonly gcMs: { readonly service?: number; readonly compiler?: number };
  /** ChangeGc.oldGrowth's median, MiB. */
  readonly oldGrowth?: { readonly service?: number; readonly compiler?: number };
  readonly withMajorGc: { readonly service: number; readonly compiler: number };
}

const med = (xs: readonly (number | undefined)[]): number | undefined =>
  median(xs.filter((x): x is number => x !== undefined)) ?? undefined;

export function cpuMedians(
  changes: readonly { readonly cpu?: ChangeCpu; readonly gc?: ChangeGc }[],
): CpuMedians {
  const cpus = changes.flatMap((c) => (c.cpu ? [c.cpu] : []));
  const gcs = changes.flatMap((c) => (c.gc ? [c.gc] : []));
  const of = (k: Exclude<keyof ChangeCpu, 'envoys' | 'waited'>) => med(cpus.map((c) => c[k]));
  const envoys = Math.max(0, ...cpus.map((c) => c.envoys.length));
  return {
    changes: cpus.length,
    cpu: {
      windowMs: of('windowMs') ?? Number.NaN,
      service: of('service'),
      compiler: of('compiler'),
      steadfastOther: of('steadfastOther'),
      apiServer: of('apiServer'),
      etcd: of('etcd'),
      bench: of('bench'),
      machine: of('machine'),
      envoys: Array.from({ length: envoys }, (_, i) => med(cpus.map((c) => c.envoys[i]))),
      waited: {
        service: med(cpus.map((c) => c.waited?.service)),
        compiler: med(cpus.map((c) => c.waited?.compiler)),
        envoys: Array.from({ length: envoys }, (_, i) => med(cpus.map((c) => c.waited?.envoys[i]))),
      },
    },
    others: med(cpus.map(othersMs)),
    gcMs: { service: med(gcs.map((g) => g.service.ms)), compiler: med(gcs.map((g) => g.compiler.ms)) },
    oldGrowth: {
      service: med(gcs.map((g) => g.oldGrowth?.service)),
      compiler: med(gcs.map((g) => g.oldGrowth?.compiler)),
    },
    withMajorGc: {
      service: gcs.filter((g) => g.service.majors > 0).length,
      compiler: gcs.filter((g) => g.compiler.majors > 0).length,
    },
  };
}

/** What the parts named here did not use of the machine's busy time (others' work, the kernel's). */
export function othersMs(cpu: ChangeCpu): number | undefined {
  if (cpu.machine === undefined) return undefined;
  const parts = [
    cpu.service,
    cpu.compiler,
    cpu.steadfastOther,
    cpu.apiServer,
    cpu.etcd,
    cpu.bench,
    ...cpu.envoys,
  ];
  return cpu.machine - parts.reduce<number>((sum, x) => sum + (x ?? 0), 0);
}

const ms = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : `${Math.round(x)}`);

/** One change's CPU and GC on a line (ms). */
export function cpuLine(cpu: ChangeCpu | undefined, gc: ChangeGc | undefined): string {
  if (!cpu) return '';
  const kube = cpu.apiServer === undefined ? '' : `, API server ${ms(cpu.apiServer)}, etcd ${ms(cpu.etcd)}`;
  const gcText = (g: GcSummary) => `${ms(g.ms)}${g.majors > 0 ? ` (major ${ms(g.majorMs)})` : ''}`;
  return (
    `; CPU over its ${ms(cpu.windowMs)} ms: service ${ms(cpu.service)}, compiler ${ms(cpu.compiler)}, its other threads ${ms(cpu.steadfastOther)}${kube}, ` +
    `Envoys ${cpu.envoys.map(ms).join(' / ')}, bench ${ms(cpu.bench)}, others ${ms(othersMs(cpu))} ` +
    `(machine ${ms(cpu.machine)} of ${ms(cpu.windowMs * availableParallelism())})` +
    (cpu.waited
      ? `; waited for a CPU: service ${ms(cpu.waited.service)}, compiler ${ms(cpu.waited.compiler)}, ` +
        `Envoys' main threads ${cpu.waited.envoys.map(ms).join(' / ')}`
      : '') +
    (gc ? `; GC service ${gcText(gc.service)}, compiler ${gcText(gc.compiler)} ms` : '')
  );
}
