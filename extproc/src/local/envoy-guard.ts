// A small parent for Envoy, so that Envoy and its temporary files never outlive the
// steadfast command that started them — not even when that command is killed with SIGKILL,
// which it cannot catch. The command holds this process's stdin open; when the command dies
// for any reason the kernel closes it, and the guard stops Envoy (SIGTERM, then SIGKILL after
// 5 s) and removes the listed directories. SIGINT, SIGTERM and SIGHUP are passed on to Envoy;
// the guard exits with Envoy's exit code. Run as `node envoy-guard.js <json GuardSpec>`.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { constants } from 'node:os';

export interface GuardSpec {
  readonly binary: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Removed once Envoy has stopped because the command died. */
  readonly removeOnOrphan: readonly string[];
}

function main(): void {
  const spec = JSON.parse(process.argv[2] ?? '{}') as GuardSpec;
  const envoy = spawn(spec.binary, [...spec.args], {
    cwd: spec.cwd,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let orphaned = false;
  const signal = (s: NodeJS.Signals): void => {
    if (envoy.exitCode === null && envoy.signalCode === null) envoy.kill(s);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => signal('SIGTERM'));
  const orphan = (): void => {
    if (orphaned) return;
    orphaned = true;
    signal('SIGTERM');
    setTimeout(() => signal('SIGKILL'), 5000).unref();
  };
  process.stdin.on('end', orphan);
  process.stdin.on('close', orphan);
  process.stdin.on('error', orphan);
  process.stdin.resume();
  envoy.on('error', (e) => {
    process.stderr.write(`cannot start Envoy (${spec.binary}): ${e.message}\n`);
    process.exit(127);
  });
  envoy.on('exit', (code, sig) => {
    if (orphaned) {
      for (const dir of spec.removeOnOrphan) rmSync(dir, { recursive: true, force: true });
    }
    process.exit(code ?? 128 + (sig ? (constants.signals[sig] ?? 0) : 0));
  });
}

main();
