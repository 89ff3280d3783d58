// Runs Envoy as a child process: starts it with its admin address written to a file,
// waits until it is LIVE with its listeners bound, and stops it (SIGTERM, then SIGKILL).
// With `guard`, Envoy runs under envoy-guard.js, which stops it if this process dies.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envoyBinary } from './envoy-binary.js';
import type { GuardSpec } from './envoy-guard.js';
import { projectRoot } from './project-root.js';

export interface EnvoyProcess {
  readonly adminUrl: string;
  /** The temporary directory holding Envoy's bootstrap and admin address file. */
  readonly directory: string;
  /** Bound listener addresses by listener name, e.g. `ingress` → `127.0.0.1:41234`. */
  readonly listeners: ReadonlyMap<string, string>;
  readonly child: ChildProcess;
  /** `http://host:port` of a listener (the first one when unnamed). */
  url(listener?: string): string;
  /**
   * Envoy's counters and gauges from its admin `/stats`; `filter` (a regular expression)
   * keeps the answer small when Envoy holds thousands of clusters.
   */
  stats(filter?: string): Promise<Map<string, number>>;
  /** Everything Envoy printed so far (when output is captured). */
  output(): string;
  stop(): Promise<void>;
}

export interface StartEnvoyOptions {
  /** The configuration as YAML text; written to a private temporary directory. */
  readonly config: string;
  readonly logLevel?: string;
  /** Extra command-line flags. */
  readonly args?: readonly string[];
  /** Pass Envoy's output through to ours instead of capturing it. */
  readonly inheritOutput?: boolean;
  readonly readyTimeoutMs?: number;
  /**
   * Run Envoy under a guard process that stops it, and removes its temporary directory and
   * these, when this process dies — even by SIGKILL (the CLI's long-running commands).
   */
  readonly guard?: { readonly removeOnOrphan: readonly string[] };
}

/** The compiled guard script; under the test runner (TypeScript sources) the one in dist/. */
function guardScript(): string {
  const here = fileURLToPath(import.meta.url);
  const path = here.endsWith('.js')
    ? join(dirname(here), 'envoy-guard.js')
    : join(projectRoot(), 'dist', 'extproc', 'src', 'local', 'envoy-guard.js');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
  return path;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Envoy on `configPath`, behind the guard when asked (it stops Envoy if this process dies). */
function spawnEnvoy(
  options: StartEnvoyOptions,
  dir: string,
  configPath: string,
  adminPath: string,
): ChildProcess {
  const envoyArgs = [
    '-c',
    configPath,
    // Several Envoys may share a machine (docs/architecture.md, Envoy fact 12).
    '--disable-hot-restart',
    '--admin-address-path',
    adminPath,
    '-l',
    options.logLevel ?? 'warning',
    ...(options.args ?? []),
  ];
  const stream = options.inheritOutput ? 'inherit' : 'pipe';
  if (!options.guard) {
    return spawn(envoyBinary(), envoyArgs, { cwd: projectRoot(), stdio: ['ignore', stream, stream] });
  }
  const spec: GuardSpec = {
    binary: envoyBinary(),
    args: envoyArgs,
    cwd: projectRoot(),
    removeOnOrphan: [dir, ...options.guard.removeOnOrphan],
  };
  // The guard's stdin stays open for as long as this process lives: its end is the signal.
  return spawn(process.execPath, [guardScript(), JSON.stringify(spec)], {
    cwd: projectRoot(),
    stdio: ['pipe', stream, stream],
  });
}

/** Waits until Envoy's admin says LIVE; its admin URL. Throws when Envoy exits or the deadline passes. */
async function untilLive(
  adminPath: string,
  deadline: number,
  envoy: { readonly exitCode: () => number | null; readonly output: () => string },
): Promise<string> {
  let adminUrl = '';
  for (;;) {
    const code = envoy.exitCode();
    if (code !== null)
      throw new Error(`Envoy exited with code ${code} before it was ready:\n${envoy.output()}`);
    if (Date.now() > deadline)
      throw new Error(`Envoy was not ready within the time allowed:\n${envoy.output()}`);
    await sleep(100);
    if (!adminUrl && existsSync(adminPath)) {
      const addr = readFileSync(adminPath, 'utf8').trim();
      if (addr) adminUrl = `http://${addr}`;
    }
    if (!adminUrl) continue;
    const state = await fetch(`${adminUrl}/ready`).then(
      (r) => r.text(),
      () => '',
    );
    if (state.trim() === 'LIVE') return adminUrl;
  }
}

/** Envoy's counters and gauges whose names match `filter` (a regular expression), by name. */
async function envoyStats(adminUrl: string, filter?: string): Promise<Map<string, number>> {
  const query = filter === undefined ? '' : `?${new URLSearchParams({ filter })}`;
  const text = await (await fetch(`${adminUrl}/stats${query}`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+): (\d+)$/.exec(line);
    if (m?.[1] && m[2]) out.set(m[1], Number(m[2]));
  }
  return out;
}

export async function startEnvoy(options: StartEnvoyOptions): Promise<EnvoyProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-envoy-'));
  const configPath = join(dir, 'envoy.yaml');
  const adminPath = join(dir, 'admin-address');
  writeFileSync(configPath, options.config);
  const child = spawnEnvoy(options, dir, configPath, adminPath);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exitCode: number | null = null;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      exitCode = code ?? (signal ? 128 : -1);
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (exitCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let adminUrl: string;
  let listeners: Map<string, string>;
  try {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
    adminUrl = await untilLive(adminPath, deadline, { exitCode: () => exitCode, output: () => output });
    listeners = await boundListeners(adminUrl);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    adminUrl,
    directory: dir,
    listeners,
    child,
    url(listener?: string) {
      const addr = listener ? listeners.get(listener) : [...listeners.values()][0];
      if (!addr)
        throw new Error(
          `Envoy has no listener "${listener ?? ''}"; it has: ${[...listeners.keys()].join(', ')}`,
        );
      return `http://${addr}`;
    },
    stats: (filter?: string) => envoyStats(adminUrl, filter),
    output: () => output,
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
