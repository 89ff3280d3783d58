// Runs the real control service (the built CLI) as a child process for a test.
import { type ChildProcess, spawn } from 'node:child_process';
import { steadfastBin } from '../../support/paths.js';

export interface ControlServiceHandle {
  readonly grpcAddress: string;
  readonly grpcPort: number;
  readonly adminUrl: string;
  readonly process: ChildProcess;
  output(): string;
  /** SIGTERM, then waits for exit; returns the exit code. */
  stop(): Promise<number>;
}

const READY = /ready; ext_proc on (\S+):(\d+); admin on (\S+)/;

export async function startControlService(
  args: readonly string[],
  options: { readonly readyTimeoutMs?: number } = {},
): Promise<ControlServiceHandle> {
  const child = spawn(process.execPath, [steadfastBin(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exitCode: number | null = null;
  const exited = new Promise<number>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code ?? -1;
      resolve(exitCode);
    }),
  );
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`control service not ready:\n${output}`)),
      // A readiness wait, not a sleep: on a loaded 2-core machine `steadfast serve` took up to
      // 9.5 s to be ready (load 17) and more than 15 s in a full run next to other work.
      options.readyTimeoutMs ?? 60_000,
    );
    const onData = (d: Buffer): void => {
      output += d.toString();
      const m = READY.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`control service exited with ${code}:\n${output}`));
    });
  });
  return {
    grpcAddress: `${ready[1]}:${ready[2]}`,
    grpcPort: Number(ready[2]),
    adminUrl: ready[3] as string,
    process: child,
    output: () => output,
    stop: async () => {
      if (exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
