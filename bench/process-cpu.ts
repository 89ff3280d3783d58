// CPU time a process has used, all its threads together, from /proc/<pid>/stat
// (utime + stime, in clock ticks). Linux only; elsewhere the benchmark reports no CPU.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/**
 * Microseconds of CPU (user + system) used so far by `pid`, or undefined if unreadable; with
 * `tid`, by that thread of it alone (a process's first thread has its pid).
 */
export function processCpuUs(pid: number | undefined, tid?: number): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5); here indexes 11 and 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? (ticks * 1e6) / clockTicks() : undefined;
}

/** CPU used by several processes between two moments. */
export class CpuMeter {
  private readonly before: Array<number | undefined>;

  constructor(private readonly pids: ReadonlyArray<number | undefined>) {
    this.before = pids.map((pid) => processCpuUs(pid));
  }

  /** Microseconds used since construction, per pid (undefined when a pid is absent). */
  read(): Array<number | undefined> {
    return this.pids.map((pid, i) => {
      const a = this.before[i];
      const b = processCpuUs(pid);
      return a === undefined || b === undefined ? undefined : b - a;
    });
  }
}

/** The CPU (µs) `pid` has used once it has used none for 300 ms (Envoy done with an update). */
export async function quietCpuUs(pid: number | undefined): Promise<number> {
  let last = processCpuUs(pid) ?? 0;
  for (let still = 0; still < 3;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = processCpuUs(pid) ?? 0;
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return last;
}
