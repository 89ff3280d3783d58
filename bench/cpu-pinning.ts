// Which CPU each side runs on. The system under test (Envoy, and the control service in
// attach mode) gets CPU 0; the load generators, the backends and this process get CPU 1,
// so the two sides never take time from each other. Without taskset or a second CPU
// nothing is pinned, and the results say so.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface CpuPinning {
  readonly pinned: boolean;
  readonly why: string;
  /** Command prefix for the system under test, e.g. `['taskset', '-c', '0']`. */
  readonly sut: readonly string[];
  /** Command prefix for load generators. */
  readonly driver: readonly string[];
  /** Pins a running process, every thread of it, to the system-under-test CPU. */
  pinSut(pid: number): void;
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
export function planCpuPinning(): CpuPinning {
  const cpus = availableParallelism();
  if (cpus < 2 || !tasksetWorks()) {
    return {
      pinned: false,
      why: cpus < 2 ? `only ${cpus} CPU available` : 'taskset is not available',
      sut: [],
      driver: [],
      pinSut: () => undefined,
    };
  }
  pin(process.pid, 1);
  return {
    pinned: true,
    why: 'Envoy and the control service on CPU 0; wrk, the latency client and the backends on CPU 1',
    sut: ['taskset', '-c', '0'],
    driver: ['taskset', '-c', '1'],
    pinSut: (pid) => pin(pid, 0),
  };
}
