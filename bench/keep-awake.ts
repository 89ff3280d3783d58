// Keeps CPUs from going idle during the benchmark. On a virtual machine a vCPU that has
// gone idle can take hundreds of microseconds to wake (the hypervisor has to schedule it
// again), and an Envoy that sleeps between requests pays that on every wake-up: measured
// on the committed run's VM, plain Envoy at 4,400 requests/s answered in 9.5 ms at the
// median with idle CPUs and in 0.5 ms with them kept awake. Like booting with idle=poll,
// one spinning process per CPU at SCHED_IDLE priority, the lowest there is: any other
// runnable task, Envoy's or anyone's, preempts it at once. Each spinner ends by itself
// after `maxSeconds`, and is stopped as soon as the benchmark ends.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export interface KeepAwake {
  readonly pids: ReadonlyArray<number | undefined>;
  stop(): Promise<void>;
}

function chrtWorks(): boolean {
  const r = spawnSync('chrt', ['-i', '0', 'true']);
  return !r.error && r.status === 0;
}

/** Starts one idle-priority spinner per CPU; undefined when chrt or taskset is missing. */
export function keepCpusAwake(cpus: readonly number[], maxSeconds: number): KeepAwake | undefined {
  if (!chrtWorks()) return undefined;
  const spin = `const end = Date.now() + ${Math.round(maxSeconds * 1000)}; while (Date.now() < end);`;
  const children: ChildProcess[] = cpus.map((cpu) =>
    spawn('chrt', ['-i', '0', 'taskset', '-c', String(cpu), process.execPath, '-e', spin], {
      stdio: 'ignore',
    }),
  );
  return {
    pids: children.map((c) => c.pid),
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
