// Runs a real Envoy for a test: writes its configuration, starts it with its admin on
// an ephemeral port, waits until it is LIVE and its listeners are bound, and stops it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/paths.js';
import { envoyBinary } from './envoy-binary.js';

export interface EnvoyHandle {
  readonly adminUrl: string;
  /** Bound listener addresses by listener name, e.g. `ingress` → `127.0.0.1:41234`. */
  readonly listeners: ReadonlyMap<string, string>;
  /** `http://host:port` of a listener. */
  url(listener?: string): string;
  stats(): Promise<Map<string, number>>;
  logs(): string;
  stop(): Promise<void>;
}

export interface StartEnvoyOptions {
  /** Extra command-line flags. */
  readonly args?: readonly string[];
  readonly logLevel?: string;
  readonly timeoutMs?: number;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Starts Envoy with `config` (YAML text). The admin address is taken from --admin-address-path. */
export async function startEnvoy(config: string, options: StartEnvoyOptions = {}): Promise<EnvoyHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-envoy-'));
  const configPath = join(dir, 'envoy.yaml');
  const adminPath = join(dir, 'admin-address');
  writeFileSync(configPath, config);
  let output = '';
  const child: ChildProcess = spawn(
    envoyBinary(),
    [
      '-c',
      configPath,
      '--disable-hot-restart',
      '--admin-address-path',
      adminPath,
      '-l',
      options.logLevel ?? 'warning',
      ...(options.args ?? []),
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? -1));

  const stop = async (): Promise<void> => {
    if (exited === null) {
      child.kill('SIGTERM');
      for (let i = 0; i < 50 && exited === null; i++) await sleep(100);
      if (exited === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let adminUrl = '';
  let listeners = new Map<string, string>();
  try {
    for (;;) {
      if (exited !== null) throw new Error(`Envoy exited with ${exited} before it was ready:\n${output}`);
      if (Date.now() > deadline) throw new Error(`Envoy was not ready in time:\n${output}`);
      await sleep(100);
      if (!adminUrl && existsSync(adminPath)) {
        const addr = readFileSync(adminPath, 'utf8').trim();
        if (addr) adminUrl = `http://${addr}`;
      }
      if (!adminUrl) continue;
      const ready = await fetch(`${adminUrl}/ready`).then((r) => r.text(), () => '');
      if (ready.trim() !== 'LIVE') continue;
      listeners = await boundListeners(adminUrl);
      break;
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    adminUrl,
    listeners,
    url(listener?: string) {
      const addr = listener ? listeners.get(listener) : [...listeners.values()][0];
      if (!addr) throw new Error(`Envoy has no listener ${listener ?? ''}: ${[...listeners.keys()].join(', ')}`);
      return `http://${addr}`;
    },
    async stats() {
      const text = await (await fetch(`${adminUrl}/stats`)).text();
      const out = new Map<string, number>();
      for (const line of text.split('\n')) {
        const m = /^([^:]+): (\d+)$/.exec(line);
        if (m?.[1] && m[2]) out.set(m[1], Number(m[2]));
      }
      return out;
    },
    logs: () => output,
    stop,
  };
}

async function boundListeners(adminUrl: string): Promise<Map<string, string>> {
  const body = (await (await fetch(`${adminUrl}/listeners?format=json`)).json()) as {
    listener_statuses?: Array<{
      name: string;
      local_address?: { socket_address?: { address: string; port_value: number } };
    }>;
  };
  const out = new Map<string, string>();
  for (const l of body.listener_statuses ?? []) {
    const a = l.local_address?.socket_address;
    if (a) out.set(l.name, `${a.address}:${a.port_value}`);
  }
  return out;
}

/** `envoy --mode validate`, from the repository root so relative paths resolve as documented. */
export function validateEnvoyConfig(path: string): { ok: boolean; output: string } {
  const r = spawnSync(envoyBinary(), ['--mode', 'validate', '-c', path, '-l', 'error', '--disable-hot-restart'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}
