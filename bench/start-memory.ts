// `node dist/bench/start-memory.js [--routes N] [--runs R] [--edits E] [--node-arg FLAG]… [--bin PATH]…
// [--provider files|kubernetes] [--heaps [--live]] [--timeline]`:
// `serve --xds`'s peak memory from its start until its first Envoy holds every route, and the
// CPU of each thread per one-route edit after it, without real Envoys: a lighter companion to
// `bench:scale --fleet`'s "control plane peak until then". One ADS client (ads-light-client.ts,
// which asks and ACKs as Envoy 1.40 does, VHDS included) connects at /readyz; the peak is
// VmHWM once the control plane says that client took the generation (/v1/xds). Then `--edits`
// edits of one route in the 10,000-route file, each waited for on that client, with each
// thread's CPU (/proc/PID/task/TID/schedstat) over them: the main thread, the compiler thread, and
// the rest (V8's GC helpers, libuv). `--node-arg` passes a flag to `serve`'s Node; `--bin` runs
// another build (a copy of bin/ and dist/ of an earlier commit); given more than once, the runs
// take each in turn, for A/B runs in one sitting. `--provider kubernetes` serves the objects from a
// local API server (scripts/kube-local.mjs), started and filled once for every run (then one
// untimed serve writes every route's status, so each run starts from a cluster in step), and
// edits the route with a request. `--heaps --live` also reads each thread's heap after a full GC of
// both (what is held, not what is not collected yet), before the edits, which then follow a GC.
// Numbers, never assertions.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TYPE_CLUSTER } from '../extproc/src/envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../extproc/src/envoy/xds-resources.js';
import { envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { LightEnvoy } from './ads-light-client.js';
import { median } from './round-stats.js';
import {
  type Changes,
  fileChanges,
  kubeChanges,
  kubeSource,
  startKubeWith,
  stopKube,
} from './scale-changes.js';
import { writeScaleConfig } from './scale-config.js';
import { REAL_ENVOY_ADDRESSES } from './scale-fleet-setup.js';
import {
  type ThreadHeap,
  collectGarbage,
  collectWorkersGarbage,
  inspectorUrl,
  threadHeaps,
} from './inspector-gc.js';
import type { XdsClientStatus } from '../extproc/src/xds/ads-server.js';
import { generations, xdsDelivered, xdsEnvoys, xdsStatus } from './scale-fleet-xds.js';
import { freePort, memoryMiB, sleep, startCli, stopCli, until } from './scale-process.js';

const { values: opts } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '1' },
    edits: { type: 'string', default: '10' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    bin: { type: 'string', multiple: true, default: [] },
    provider: { type: 'string', default: 'files' },
    /** Where to write serve's output (with `--node-arg --trace-gc`: each isolate's heap at every collection). */
    output: { type: 'string' },
    /** Also each thread's V8 heap, space by space, when the client was served (serve runs with an inspector). */
    heaps: { type: 'boolean', default: false },
    /** With --heaps: each thread's heap again after a full GC of both (what is live, not what is not collected yet). */
    live: { type: 'boolean', default: false },
    /** Also serve's RSS and each thread's CPU every 100 ms until the client was served: where the peak falls. */
    timeline: { type: 'boolean', default: false },
  },
});

/** Each thread's CPU so far in ms, by thread id (schedstat's time on the CPU, in ns: finer than stat's ticks). */
function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const onCpuNs = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(Number(tid), onCpuNs / 1e6);
    } catch {
      // The thread ended.
    }
  }
  return out;
}

/**
 * The compiler thread: of the threads besides the main one, the one that used most CPU by the
 * time the first client is served (its first compile, ~1.5 s at 10,000 routes; V8's helpers less).
 */
function compilerThread(pid: number): number {
  const cpu = [...threadCpuMs(pid)].filter(([tid]) => tid !== pid).sort((a, b) => b[1] - a[1]);
  return cpu[0]?.[0] ?? -1;
}

interface Run {
  readySeconds: number;
  servedSeconds: number;
  /** VmHWM when /readyz answered: the peak of loading alone, before any client asked for anything. */
  readyPeakMiB: number;
  /**
   * The first load's stages, in seconds from the start as /readyz is: the read begun, the compile
   * taken and answered on its thread, the answer back, the snapshot built (serve's own clocks).
   */
  load?: { read: number; thread: number; threadDone: number; received: number; built: number };
  peakMiB: number;
  restMiB: number;
  /** CPU until the client was served, in ms: the main thread's and the compiler thread's (its first compile). */
  startCpu: { main: number; compiler: number };
  /** Per edit, ms of CPU: main thread, compiler thread, the others. */
  edits: { main: number; compiler: number; other: number; seconds: number }[];
  /** Each thread's heap when the client was served (--heaps): the main thread's first. */
  heaps?: ThreadHeap[];
  /** The same after a full GC of each thread (--heaps --live). */
  liveHeaps?: ThreadHeap[];
  /** --timeline: one line per 100 ms until the client was served. */
  timeline?: string[];
}

/**
 * Samples serve's RSS every 10 ms and, per 100 ms, says the highest RSS and the CPU its main
 * thread, its busiest other thread (the compiler's, during the first compile) and the rest used.
 */
function timeline(pid: number, t0: number): { mark: (what: string) => void; stop: () => string[] } {
  const lines: string[] = [];
  let marks: string[] = [];
  let high = 0;
  let last = threadCpuMs(pid);
  let slot = 0;
  const line = (t: number): void => {
    const now = threadCpuMs(pid);
    const used = [...now].map(([tid, ms]) => [tid, ms - (last.get(tid) ?? 0)] as const);
    const main = used.find(([tid]) => tid === pid)?.[1] ?? 0;
    const others = used.filter(([tid]) => tid !== pid).sort((x, y) => y[1] - x[1]);
    const rest = others.slice(1).reduce((sum, [, ms]) => sum + ms, 0);
    lines.push(
      `  ${(t / 1000).toFixed(1)} s: RSS up to ${high.toFixed(0)} MiB; CPU main ${main.toFixed(0)}, ` +
        `busiest other ${(others[0]?.[1] ?? 0).toFixed(0)}, rest ${rest.toFixed(0)} ms${marks.join('')}`,
    );
    marks = [];
    last = now;
    high = 0;
  };
  const sample = setInterval(() => {
    high = Math.max(high, memoryMiB(pid, 'VmRSS'));
    const t = performance.now() - t0;
    if (t < (slot + 1) * 100) return;
    slot = Math.floor(t / 100);
    line(t);
  }, 10);
  return {
    mark: (what) => marks.push(`  <- ${what}`),
    stop: () => {
      if (marks.length > 0) line(performance.now() - t0);
      clearInterval(sample);
      return lines;
    },
  };
}

/** Each thread's heap after a full GC of each: what the threads hold live (the GC's freed Buffers let go a moment later). */
async function liveThreadHeaps(url: string): Promise<ThreadHeap[]> {
  await collectGarbage(url);
  await collectWorkersGarbage(url);
  await sleep(200);
  return threadHeaps(url);
}

const MIB = 1024 * 1024;

/** A thread's heap in one line: each space that holds anything, size (used), in MiB. */
function heapLine(heap: ThreadHeap): string {
  const spaces = heap.spaces
    .filter((x) => x.size > 0)
    .map(
      (x) => `${x.name.replace(/_space$/, '')} ${(x.size / MIB).toFixed(1)} (${(x.used / MIB).toFixed(1)})`,
    );
  const total = heap.spaces.reduce((sum, x) => sum + x.size, 0);
  return `${(total / MIB).toFixed(1)} MiB: ${spaces.join(', ')}; external ${(heap.external / MIB).toFixed(1)}`;
}

type Edit = Run['edits'][number];

/** `--edits` edits of the last route's path (each run's its own), each until the client took it, and the CPU each thread used for it. */
async function timeEdits(
  at: { pid: number; changes: Changes; n: number; run: number; adminPort: number; limit: number },
  delivered: readonly XdsClientStatus[],
): Promise<Edit[]> {
  const { pid, n, changes } = at;
  const compiler = compilerThread(pid);
  await changes.ready();
  const edits: Edit[] = [];
  let envoys = delivered;
  for (let k = 0; k < Number(opts.edits); k++) {
    const before = threadCpuMs(pid);
    const t = performance.now();
    await changes.edit(n - 1, `/edited-${at.run}-${k}/${n - 1}`)();
    envoys = await xdsDelivered(at.adminPort, 1, at.limit, generations(envoys));
    const seconds = (performance.now() - t) / 1000;
    // What the edit set off after the client took it (a collection) counts too.
    await sleep(300);
    const after = threadCpuMs(pid);
    const used = (tid: number) => (after.get(tid) ?? 0) - (before.get(tid) ?? 0);
    let other = 0;
    for (const tid of after.keys()) if (tid !== pid && tid !== compiler) other += used(tid);
    edits.push({ main: used(pid), compiler: used(compiler), other, seconds });
  }
  return edits;
}

/**
 * Waits until the client took the generation's virtual hosts too. The client subscribes to them
 * after it answered for the route configurations, which lands the generation (/v1/xds: nothing in
 * flight) before the virtual hosts are even made: a peak read then missed them.
 */
async function virtualHostsTaken(adminPort: number, limit: number): Promise<readonly XdsClientStatus[]> {
  let envoys: readonly XdsClientStatus[] = [];
  await until('the client took the virtual hosts', limit, async () => {
    envoys = await xdsEnvoys(adminPort);
    return envoys.every(
      (e) => e.inFlight === undefined && e.acked[TYPE_VIRTUAL_HOST] === e.acked[TYPE_CLUSTER],
    );
  });
  return envoys;
}

/** The first load's stages (the generation /readyz serves), in seconds from `epoch0`, serve's start. */
async function firstLoad(adminPort: number, epoch0: number): Promise<Run['load']> {
  const times = (await xdsStatus(adminPort)).generation?.load;
  const at = (ms: number | undefined) => ((ms ?? Number.NaN) - epoch0) / 1000;
  return (
    times && {
      read: at(times.readAt),
      thread: at(times.threadAt),
      threadDone: at(times.threadDoneAt),
      received: at(times.receivedAt),
      built: at(times.builtAt),
    }
  );
}

/** Where a run's objects come from: `serve`'s flags for it and the edits it makes. */
interface Source {
  readonly args: readonly string[];
  changes(): Changes;
  close(): Promise<void>;
}

/** The files of N routes in a directory of the run's own, or a local API server holding them. */
async function sourceOf(n: number, kubernetes: boolean): Promise<Source> {
  const dir = mkdtempSync(join(tmpdir(), `steadfast-start-memory-${n}-`));
  writeScaleConfig(dir, n, { listener: await freePort(), backend: 9 }, kubernetes ? 'kubernetes' : 'files');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (!kubernetes) {
    return {
      args: ['--config', dir],
      changes: () => fileChanges(dir, n),
      close: () => Promise.resolve(remove()),
    };
  }
  const kube = await startKubeWith(dir);
  remove();
  const args = kubeSource(kube);
  // A serve that cannot write the statuses stops the run: its API server and etcd with it.
  await writeStatuses(args, n).catch(async (e: unknown) => {
    await stopKube(kube);
    throw e;
  });
  return { args, changes: () => kubeChanges(kube), close: () => stopKube(kube) };
}

/**
 * Runs `serve` once, untimed, until it has written every route's status: otherwise the first runs
 * write them (~1,200 in a run's life at 10,000 routes, load ~8) and carry work the later ones do not.
 */
async function writeStatuses(source: readonly string[], n: number): Promise<void> {
  const cli = startCli(
    [
      ...['serve', ...source, '--xds', `127.0.0.1:${await freePort()}`],
      ...['--admin-port', String(await freePort()), '--ext-proc-address', '127.0.0.1:0'],
      '--session-key',
      Buffer.alloc(32, 7).toString('base64'),
    ],
    [],
    opts.bin[0],
  );
  try {
    await until(
      'every status written',
      Math.max(120_000, n * 30),
      () => Promise.resolve(cli.output().includes('status: every object steadfast owns is checked')),
      cli.alive,
    );
  } finally {
    await stopCli(cli.child);
  }
}

async function oneRun(n: number, run: number, source: Source, bin: string | undefined): Promise<Run> {
  const [adminPort, xdsPort] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const epoch0 = performance.timeOrigin + t0;
  const cli = startCli(
    [
      ...['serve', ...source.args, '--xds', `127.0.0.1:${xdsPort}`],
      ...['--session-key', Buffer.alloc(32, 7).toString('base64')],
      ...['--admin-port', String(adminPort), '--ext-proc-address', '127.0.0.1:0'],
    ],
    [...opts['node-arg'], ...(opts.heaps ? ['--inspect=127.0.0.1:0'] : [])],
    bin,
  );
  const pid = cli.child.pid ?? -1;
  const samples = opts.timeline ? timeline(pid, t0) : undefined;
  const limit = Math.max(60_000, n * 20);
  let client: LightEnvoy | undefined;
  const changes = source.changes();
  try {
    await until(
      'readyz',
      limit,
      async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined))?.ok === true,
      cli.alive,
    );
    const readySeconds = (performance.now() - t0) / 1000;
    const readyPeakMiB = memoryMiB(pid, 'VmHWM');
    samples?.mark('ready');
    const load = await firstLoad(adminPort, epoch0);
    client = new LightEnvoy(`127.0.0.1:${xdsPort}`, 'start-memory', REAL_ENVOY_ADDRESSES[0], envoyVersion());
    await xdsDelivered(adminPort, 1, limit);
    const envoys = await virtualHostsTaken(adminPort, limit);
    const servedSeconds = (performance.now() - t0) / 1000;
    samples?.mark('served');
    const lines = samples?.stop();
    const peakMiB = memoryMiB(pid, 'VmHWM');
    const restMiB = memoryMiB(pid, 'VmRSS');
    const cpu = threadCpuMs(pid);
    const startCpu = {
      main: cpu.get(pid) ?? Number.NaN,
      compiler: cpu.get(compilerThread(pid)) ?? Number.NaN,
    };
    const url = inspectorUrl(cli.output());
    const heaps = opts.heaps && url !== undefined ? await threadHeaps(url) : undefined;
    const liveHeaps = heaps && opts.live && url !== undefined ? await liveThreadHeaps(url) : undefined;
    const edits = await timeEdits({ pid, changes, n, run, adminPort, limit }, envoys);
    return {
      readySeconds,
      servedSeconds,
      readyPeakMiB,
      ...(load ? { load } : {}),
      peakMiB,
      restMiB,
      startCpu,
      edits,
      ...(heaps ? { heaps } : {}),
      ...(liveHeaps ? { liveHeaps } : {}),
      ...(lines ? { timeline: lines } : {}),
    };
  } catch (e) {
    process.stderr.write(`${cli.output().slice(-3000)}\n`);
    throw e;
  } finally {
    samples?.stop();
    client?.close();
    changes.close();
    await stopCli(cli.child);
    if (opts.output !== undefined) writeFileSync(opts.output, cli.output());
  }
}

const medianOf = (xs: readonly number[]): number => median(xs) ?? Number.NaN;

async function main(): Promise<void> {
  const n = Number(opts.routes);
  if (opts.provider !== 'files' && opts.provider !== 'kubernetes')
    throw new Error(`--provider is files or kubernetes, not ${opts.provider}`);
  const source = await sourceOf(n, opts.provider === 'kubernetes');
  try {
    await runAll(n, source);
  } finally {
    await source.close();
  }
}

async function runAll(n: number, source: Source): Promise<void> {
  for (let r = 0; r < Number(opts.runs); r++) {
    const bin = opts.bin.length > 0 ? opts.bin[r % opts.bin.length] : undefined;
    const label = [bin ?? 'this checkout', ...opts['node-arg']].join(' ');
    const run = await oneRun(n, r, source, bin);
    const e = run.edits;
    const edits =
      e.length === 0
        ? ''
        : `; per edit (median of ${e.length}) main ${medianOf(e.map((x) => x.main)).toFixed(0)} ms, compiler ` +
          `${medianOf(e.map((x) => x.compiler)).toFixed(0)} ms, other threads ${medianOf(e.map((x) => x.other)).toFixed(0)} ms, ` +
          `on the client ${medianOf(e.map((x) => x.seconds)).toFixed(2)} s`;
    console.log(
      `${label}: ${n} routes: ready ${run.readySeconds.toFixed(2)} s, first client served ` +
        `${run.servedSeconds.toFixed(2)} s, peak ${run.peakMiB.toFixed(0)} MiB (at ready ${run.readyPeakMiB.toFixed(0)}, ` +
        `RSS once served ${run.restMiB.toFixed(0)}), ` +
        `CPU until then main ${run.startCpu.main.toFixed(0)} ms, compiler ${run.startCpu.compiler.toFixed(0)} ms${edits}`,
    );
    const l = run.load;
    if (l) {
      console.log(
        `  first load: read at ${l.read.toFixed(2)} s, compiled on its thread ${l.thread.toFixed(2)}-${l.threadDone.toFixed(2)} s, ` +
          `back ${l.received.toFixed(2)} s, snapshot built ${l.built.toFixed(2)} s, ready ${run.readySeconds.toFixed(2)} s`,
      );
    }
    for (const line of run.timeline ?? []) console.log(line);
    run.heaps?.forEach((h, i) =>
      console.log(`  ${i === 0 ? 'main thread' : `worker ${i}`} heap ${heapLine(h)}`),
    );
    run.liveHeaps?.forEach((h, i) =>
      console.log(`  ${i === 0 ? 'main thread' : `worker ${i}`} after a full GC ${heapLine(h)}`),
    );
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(`start-memory: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
