// wrk, the throughput load generator: found on PATH or the run stops with how to get it.
// It is a system package the benchmark needs; npm install and CI never install it.
import { spawn, spawnSync } from 'node:child_process';
import { loopbackAddress } from '../backends/loopback-endpoint.js';

export interface WrkOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A command prefix that pins wrk to a CPU, e.g. `['taskset', '-c', '1']`. */
  readonly pin?: readonly string[];
}

export interface WrkResult {
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  /** Non-2xx/3xx responses plus socket errors. */
  readonly errors: number;
  readonly output: string;
}

export function wrkVersion(): string {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error) {
    throw new Error(
      'wrk is not installed; the benchmark needs it for throughput. Install it with ' +
        '`apt-get install wrk` (Debian/Ubuntu) and run `npm run bench` again.',
    );
  }
  return /wrk\s+(\S+)/.exec(`${r.stdout}${r.stderr}`)?.[1] ?? 'unknown';
}

export function parseWrkOutput(output: string): Omit<WrkResult, 'output'> {
  const done = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(output);
  if (!done) throw new Error(`cannot read wrk's output:\n${output}`);
  const scale: Record<string, number> = { us: 1e-6, ms: 1e-3, s: 1, m: 60 };
  const requests = Number(done[1]);
  const seconds = Number(done[2]) * (scale[done[3] as string] ?? 1);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket ? socket.slice(1, 5).reduce((a, b) => a + Number(b), 0) : 0;
  return { requests, seconds, rps: requests / seconds, errors: non2xx + socketErrors };
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  // The benchmark loads nothing but loopback (127.0.0.0/8).
  loopbackAddress(new URL(o.url).hostname);
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(o.url);
  const [cmd, ...rest] = [...(o.pin ?? []), 'wrk', ...args];
  const child = spawn(cmd as string, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
  if (code !== 0) throw new Error(`wrk exited with ${code}:\n${output}`);
  return { ...parseWrkOutput(output), output };
}
