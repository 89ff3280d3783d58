// Which CPU each side runs on. The system under test (Envoy, and the control service in
// attach mode) gets CPU 0; the load generators, the backends and this process get CPU 1,
// so the two sides never take time from each other. Without taskset or a second CPU
// nothing is pinned, and the results say so.
//
// On a machine others use too, whatever else runs lands on CPU 0 beside Envoy (CPU 1 is
// kept busy by the load generators) and can starve it: the system under test runs at a
// raised priority (nice -10 by default) when the benchmark may set one.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';

export interface CpuPinning {
  readonly pinned: boolean;
  readonly why: string;
  /** Command prefix for the system under test, e.g. `['taskset', '-c', '0']`. */
  readonly sut: readonly string[];
  /** Command prefix for load generators. */
  readonly driver: readonly string[];
  /** The nice value the system under test runs at (0: not raised). */
  readonly sutNice: number;
  /** Pins a running process, every thread of it, to the system-under-test CPU, at its priority. */
  pinSut(pid: number): void;
}

/** Sets the nice value of every thread of `pid` (nice is per thread on Linux); false if not allowed. */
function renice(pid: number, nice: number): boolean {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), nice);
    return true;
  } catch {
    return false;
  }
}

/** Whether this process may raise a priority (root, or CAP_SYS_NICE). */
function mayRaisePriority(nice: number): boolean {
  const probe = spawnSync('nice', ['-n', String(nice), 'true']);
  return !probe.error && probe.status === 0 && !String(probe.stderr).includes('cannot set niceness');
}

function tasksetWorks(): boolean {
  const r = spawnSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}

function pin(pid: number, cpu: number): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`taskset could not pin ${pid} to CPU ${cpu}: ${r.stderr}`);
}

/** Decides the pinning and moves this process (backends, latency client) to the driver CPU. */
export function planCpuPinning(wantedNice: number): CpuPinning {
  const nice = wantedNice !== 0 && mayRaisePriority(wantedNice) ? wantedNice : 0;
  const niceWhy = nice === 0 ? '' : ` (at nice ${nice})`;
  const cpus = availableParallelism();
  if (cpus < 2 || !tasksetWorks()) {
    return {
      pinned: false,
      why: `${cpus < 2 ? `only ${cpus} CPU available` : 'taskset is not available'}: nothing pinned${niceWhy}`,
      sut: nice === 0 ? [] : ['nice', '-n', String(nice)],
      driver: [],
      sutNice: nice,
      pinSut: (pid) => void (nice !== 0 && renice(pid, nice)),
    };
  }
  pin(process.pid, 1);
  return {
    pinned: true,
    why: `Envoy and the control service on CPU 0${niceWhy}; wrk, the latency client and the backends on CPU 1`,
    sut: [...(nice === 0 ? [] : ['nice', '-n', String(nice)]), 'taskset', '-c', '0'],
    driver: ['taskset', '-c', '1'],
    sutNice: nice,
    pinSut: (pid) => {
      pin(pid, 0);
      if (nice !== 0) renice(pid, nice);
    },
  };
}
