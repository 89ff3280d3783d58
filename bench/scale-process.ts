// What bench:scale and its fleet mode share about processes: the CLI started and stopped, free
// ports, polling until a condition holds, memory as /proc tells it, and one GET with a Host header.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../extproc/src/local/project-root.js';

export const ROOT = projectRoot();
const BIN = join(ROOT, 'bin', 'steadfast.js');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** GET with a Host header: the status, or 0 when nothing answers yet. */
export function status(port: number, host: string, path: string, address = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: address, port, path, headers: { host }, agent: false, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Polls `check` every 20 ms; the seconds until it held, or throws after `limitMs` or when `alive` fails. */
export async function until(
  what: string,
  limitMs: number,
  check: () => Promise<boolean>,
  alive: () => boolean = () => true,
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await check()) return (performance.now() - t0) / 1000;
    if (!alive()) throw new Error(`${what}: the command exited`);
    if (performance.now() - t0 > limitMs) throw new Error(`${what}: not within ${limitMs / 1000} s`);
    await sleep(20);
  }
}

/** A change's times, in seconds from the moment it was made (a file saved, or a request sent). */
export interface ChangeClock {
  /** Until `wait` was done: served (for bench:scale --fleet, on every real Envoy). */
  readonly seconds: number;
  /** Until the change itself was done: the file written, or the API server's answer read. */
  readonly madeSeconds: number;
}

/**
 * Times one change from `make`'s call, which saves a file or sends a request made ready
 * beforehand; `wait` starts polling at the same moment, so neither waits for the other.
 */
export async function timedChange(
  make: () => Promise<void>,
  wait: () => Promise<unknown>,
): Promise<ChangeClock> {
  const t0 = performance.now();
  let madeSeconds = Number.NaN;
  const made = make().then(() => {
    madeSeconds = (performance.now() - t0) / 1000;
  });
  await Promise.all([made, wait()]);
  return { seconds: (performance.now() - t0) / 1000, madeSeconds };
}

/** A process's memory as /proc tells it, in MiB: VmHWM (the peak) or VmRSS (now). */
export function memoryMiB(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * How long the service is left alone before its memory at rest is read. V8's memory reducer
 * starts 8 s after the last burst of allocation and returns the old generation's garbage
 * over the following seconds (measured at 10,000 routes: 425 MiB after three quick changes,
 * 222 MiB 20 s later).
 */
export const REST_SECONDS = 30;

/** Starts VmHWM again from the current RSS (Linux's clear_refs 5), so a later peak is of what came after. */
export function resetPeak(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Not Linux, or not allowed: the peak stays the process's whole-life peak.
  }
}

/** The descendants of a process, by walking /proc/<pid>/task/<tid>/children. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number): void => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(' ').filter((x) => x !== '')) {
        out.push(Number(c));
        visit(Number(c));
      }
    }
  };
  visit(pid);
  return out;
}

export function envoyPid(control: number): number | undefined {
  return descendants(control).find((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'envoy';
    } catch {
      return false;
    }
  });
}

export interface Cli {
  readonly child: ChildProcess;
  output(): string;
  /** Whether it still runs. */
  alive(): boolean;
}

/** The CLI with `args`, under Node with `nodeArgs`; `bin`: another build's entry point. */
export function startCli(args: readonly string[], nodeArgs: readonly string[] = [], bin = BIN): Cli {
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return {
    child,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

export async function stopCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
