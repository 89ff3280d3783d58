// Starts bench/backend-main.ts as a child process, pinned with the driver's prefix.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface BackendProcess {
  readonly kind: 'minimal' | 'echo';
  readonly addresses: readonly string[];
  readonly port: number;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export async function startBackendProcess(
  root: string,
  kind: 'minimal' | 'echo',
  addresses: readonly string[],
  pin: readonly string[],
): Promise<BackendProcess> {
  const [cmd, ...args] = [
    ...pin,
    process.execPath,
    join(root, 'dist', 'bench', 'backend-main.js'),
    kind,
    ...addresses,
  ];
  const child = spawn(cmd as string, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the ${kind} backend did not start:\n${output}`)),
      10_000,
    );
    const onData = (d: Buffer): void => {
      output += d.toString();
      const m = /port (\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${kind} backend exited with ${code}:\n${output}`));
    });
  });
  return {
    kind,
    addresses,
    port,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}
