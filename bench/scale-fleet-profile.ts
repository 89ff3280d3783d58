// `bench:scale --fleet --profile-changes FILE`: steadfast's service thread profiled (V8's
// sampling profiler, through the inspector `serve` runs with) while the changes are timed. The
// profile goes to FILE (Chrome DevTools, speedscope); its samples within the changes' windows
// (from a change's start until both real Envoys serve it) are summed per change: by the function
// that spent them, and by the steadfast function nearest on the stack (what asked for node's,
// V8's or a package's work). Sampling costs the thread some CPU: a run with it is for finding
// where the time goes, not for the figures.
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';
import { epochMs } from './scale-fleet-stages.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

/** V8's CPU profile; its times in µs of the monotonic clock (CLOCK_MONOTONIC, as process.hrtime). */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Sampling every 250 µs: a change's few ms of work get enough samples to name their functions. */
const INTERVAL_US = 250;

/** Starts the main thread's profiler on a session kept open until stop() returns the profile. */
export function startProfile(url: string): Promise<{ stop(): Promise<CpuProfile> }> {
  const ws = new WebSocket(url);
  let next = 0;
  const waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  const call = (method: string, params: object = {}): Promise<unknown> =>
    new Promise((resolve, reject) => {
      waiting.set(++next, { resolve, reject });
      ws.send(JSON.stringify({ id: next, method, params }));
    });
  ws.on('message', (data: WebSocket.RawData) => {
    const m = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
    const w = m.id === undefined ? undefined : waiting.get(m.id);
    if (!w || m.id === undefined) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(`inspector: ${m.error.message}`));
    else w.resolve(m.result);
  });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => {
      void (async () => {
        await call('Profiler.enable');
        await call('Profiler.setSamplingInterval', { interval: INTERVAL_US });
        await call('Profiler.start');
        resolve({
          stop: async () => {
            const { profile } = (await call('Profiler.stop')) as { profile: CpuProfile };
            ws.close();
            return profile;
          },
        });
      })().catch(reject);
    });
  });
}

/** Epoch ms minus the monotonic clock's ms, on this machine now: maps a profile's times to the changes'. */
export function monotonicToEpochMs(): number {
  return epochMs() - Number(process.hrtime.bigint()) / 1e6;
}

const frameName = (n: ProfileNode): string => {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url.split('/').slice(-2).join('/');
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
};

const OURS = '/extproc/src/';

/** The top `count` of a tally, ms per change. */
function top(tally: Map<string, number>, changes: number, count: number): string[] {
  return [...tally]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => `    ${(us / 1000 / changes).toFixed(2).padStart(7)} ms  ${name}`);
}

/**
 * The profile's samples within `windows` (epoch ms), summed per change: by function (self time),
 * and by the nearest steadfast function on the stack; `offset` maps its clock (monotonicToEpochMs).
 */
export function profileSummary(
  profile: CpuProfile,
  windows: readonly (readonly [number, number])[],
  offset: number,
  count = 20,
): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sorted = [...windows].sort((a, b) => a[0] - b[0]);
  const [self, ours] = [new Map<string, number>(), new Map<string, number>()];
  let [t, w, total] = [profile.startTime, 0, 0];
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    const at = t / 1000 + offset;
    while (w < sorted.length && (sorted[w] as readonly [number, number])[1] < at) w++;
    const win = sorted[w];
    const node = byId.get(id);
    if (!win || at < win[0] || !node || node.callFrame.functionName === '(idle)') return;
    // Each sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? INTERVAL_US;
    total += us;
    self.set(frameName(node), (self.get(frameName(node)) ?? 0) + us);
    let up: ProfileNode | undefined = node;
    while (up && !up.callFrame.url.includes(OURS)) up = byId.get(parent.get(up.id) ?? -1);
    const owner = up ? frameName(up) : '(no steadfast function on the stack)';
    ours.set(owner, (ours.get(owner) ?? 0) + us);
  });
  const n = Math.max(1, windows.length);
  return [
    `steadfast's service thread over ${windows.length} changes: ${(total / 1000 / n).toFixed(1)} ms sampled per change`,
    '  by function (self):',
    ...top(self, n, count),
    '  by the nearest steadfast function on the stack:',
    ...top(ours, n, count),
  ].join('\n');
}

export function writeProfile(file: string, profile: CpuProfile): void {
  writeFileSync(file, JSON.stringify(profile));
}
