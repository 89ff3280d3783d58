// How busy the whole machine was, from /proc/stat, so a result can say how much of the
// CPU other programs took while it was measured (a shared machine is a noisy one).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Busy and total time of all CPUs so far, in clock ticks; undefined off Linux. */
function readTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

export class SystemCpuMeter {
  private readonly start = readTicks();
  private readonly startedNs = process.hrtime.bigint();

  /**
   * Per cent of the machine's CPU capacity used by everything except `ownUs` microseconds
   * (the processes the benchmark accounts for), over the time since construction.
   */
  othersPercent(ownUs: number): number | undefined {
    const end = readTicks();
    if (!this.start || !end || end.total === this.start.total) return undefined;
    const elapsedUs = Number(process.hrtime.bigint() - this.startedNs) / 1000;
    const busyShare = (end.busy - this.start.busy) / (end.total - this.start.total);
    const capacityUs = elapsedUs * availableParallelism();
    return Math.max(0, (busyShare - ownUs / capacityUs) * 100);
  }
}
