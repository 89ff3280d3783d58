// The built CLI in its own process, as a user starts it: its output collected, a wait for a
// line, and what it leaves behind (processes whose command line names a directory).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { REPO_ROOT, steadfastBin } from '../../support/paths.js';

export class CliProcess {
  readonly child: ChildProcess;
  output = '';
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [steadfastBin(), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (d: Buffer): void => {
      this.output += d.toString();
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.exit = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs = 45_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const m = pattern.exec(this.output);
        if (!m) return false;
        done();
        resolve(m);
        return true;
      };
      const onData = (): void => void check();
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
      const onExit = (): void => {
        if (check()) return;
        done();
        reject(new Error(`exited before ${pattern}:\n${this.output}`));
      };
      const done = (): void => {
        clearTimeout(timer);
        this.child.stdout?.off('data', onData);
        this.child.stderr?.off('data', onData);
        this.child.off('exit', onExit);
      };
      this.child.stdout?.on('data', onData);
      this.child.stderr?.on('data', onData);
      this.child.on('exit', onExit);
      check();
    });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}

/** Pids of the processes whose command line contains `text` (Linux /proc). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Polls `check` every 50 ms until it returns true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
