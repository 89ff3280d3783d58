// A bounded request load for failure tests: a fixed rate for a fixed time, never more than
// `maxRequests`, only to loopback (127.0.0.0/8). Every outcome is recorded.
import { Agent, request } from 'node:http';

export interface LoadOptions {
  /** Must point at 127.0.0.0/8. */
  readonly url: string;
  readonly ratePerSecond: number;
  readonly durationMs: number;
  readonly maxRequests: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-request time limit. */
  readonly timeoutMs?: number;
  /** Stops sending once an answer satisfies this (the answers already under way still count). */
  readonly stopWhen?: (sample: LoadSample) => boolean;
}

export interface LoadSample {
  /** ms since the load started. */
  readonly at: number;
  /** HTTP status, or 0 when the request failed without one. */
  readonly status: number;
  readonly error?: string;
  readonly policy?: string;
  readonly latencyMs: number;
}

export interface LoadResult {
  readonly samples: readonly LoadSample[];
  readonly failed: readonly LoadSample[];
}

export interface RunningLoad {
  readonly done: Promise<LoadResult>;
}

function one(url: URL, agent: Agent, options: LoadOptions, started: number): Promise<LoadSample> {
  const at = performance.now() - started;
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(
      url,
      { agent, headers: options.headers, timeout: options.timeoutMs ?? 5000 },
      (res) => {
        res.resume();
        res.on('end', () => {
          const policy = res.headers['x-steadfast-policy'];
          resolve({
            at,
            status: res.statusCode ?? 0,
            ...(typeof policy === 'string' ? { policy } : {}),
            latencyMs: performance.now() - t0,
          });
        });
        res.on('error', (e) =>
          resolve({ at, status: 0, error: e.message, latencyMs: performance.now() - t0 }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ at, status: 0, error: e.message, latencyMs: performance.now() - t0 }));
    req.end();
  });
}

const single = new Agent({ keepAlive: false });

/** One GET to loopback; never throws (a failure is status 0 with the error). */
export function getOnce(url: string, headers: Readonly<Record<string, string>> = {}): Promise<LoadSample> {
  const u = new URL(url);
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(u.hostname))
    throw new Error(`loopback only, not ${u.hostname}`);
  return one(u, single, { url, headers, ratePerSecond: 1, durationMs: 0, maxRequests: 1 }, performance.now());
}

export function startBoundedLoad(options: LoadOptions): RunningLoad {
  const url = new URL(options.url);
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname)) {
    throw new Error(`bounded load targets loopback only (127.0.0.0/8), not ${url.hostname}`);
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const started = performance.now();
  const pending: Promise<LoadSample>[] = [];
  const intervalMs = 1000 / options.ratePerSecond;
  let stopped = false;
  const send = (): void => {
    pending.push(
      one(url, agent, options, started).then((s) => {
        if (options.stopWhen?.(s)) stopped = true;
        return s;
      }),
    );
  };
  const done = new Promise<LoadResult>((resolve) => {
    const tick = (): void => {
      const elapsed = stopped ? options.durationMs : performance.now() - started;
      // Catch up on ticks a busy event loop delayed, but never past the bounds.
      const due = Math.min(options.maxRequests, Math.floor(elapsed / intervalMs) + 1);
      while (pending.length < due && elapsed < options.durationMs) send();
      if (elapsed < options.durationMs && pending.length < options.maxRequests) {
        setTimeout(tick, Math.max(1, intervalMs / 2));
        return;
      }
      void Promise.all(pending).then((samples) => {
        agent.destroy();
        resolve({ samples, failed: samples.filter((s) => s.status !== 200) });
      });
    };
    tick();
  });
  return { done };
}
