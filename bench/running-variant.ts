// Brings one variant up for one measurement — its control service, its Envoy (pinned to
// the system-under-test CPU), its session cookie — and takes it down again.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startEnvoy, type EnvoyProcess } from '../extproc/src/local/envoy-process.js';
import type { CpuPinning } from './cpu-pinning.js';
import { bindEnvoyConfig } from './envoy-config-binding.js';
import { REFERENCE_READY, referenceServerBinary } from './reference-ext-proc.js';
import type { Variant } from './variants.js';

export const BENCH_PATH = '/bench';

export interface RunningVariant {
  readonly host: string;
  readonly port: number;
  /** Headers every client request carries (the session cookie, when there is one). */
  readonly headers: Readonly<Record<string, string>>;
  readonly envoyPid: number | undefined;
  readonly controlPid: number | undefined;
  /** The filter's counters (`steadfast_*`) from Envoy's stats. */
  filterCounters(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

export interface VariantEnvironment {
  readonly root: string;
  readonly wasmPath: string;
  readonly nativePath: string;
  readonly backendAddresses: readonly string[];
  readonly backendPort: number;
  /** The backend process, whose CPU counts as the benchmark's own. */
  readonly backendPid: number | undefined;
  /** Other helper processes whose CPU counts as the benchmark's own (the keep-awake spinners). */
  readonly ownPids?: ReadonlyArray<number | undefined>;
  readonly pinning: CpuPinning;
  /** Node options for `steadfast serve` (the profiler's `--cpu-prof`). */
  readonly serveNodeArgs?: readonly string[];
}

interface ControlProcess {
  readonly child: ChildProcess;
  readonly grpcPort: number;
  stop(): Promise<void>;
}

const SERVE_READY = /ready; ext_proc on (\S+):(\d+)/;

/** Whatever is up right now, so an interrupted run leaves no Envoy or control service behind. */
const running = new Set<() => Promise<void>>();

export async function stopEverything(): Promise<void> {
  await Promise.allSettled([...running].map((stop) => stop()));
}

/** The variant's ext_proc server: `steadfast serve`, or the reference server (V9). */
interface ControlCommand {
  readonly name: string;
  readonly argv: readonly string[];
  readonly ready: RegExp;
}

function controlCommand(env: VariantEnvironment, v: Variant): ControlCommand | undefined {
  if (v.serveArgs) {
    return {
      name: 'steadfast serve',
      argv: [
        process.execPath,
        ...(env.serveNodeArgs ?? []),
        join(env.root, 'bin', 'steadfast.js'),
        'serve',
        ...v.serveArgs,
        '--ext-proc-address',
        '127.0.0.1:0',
        '--admin-port',
        '0',
      ],
      ready: SERVE_READY,
    };
  }
  if (v.referenceArgs) {
    return {
      name: 'the reference ext_proc server',
      argv: [referenceServerBinary(env.root), ...v.referenceArgs, '-address', '127.0.0.1:0'],
      ready: REFERENCE_READY,
    };
  }
  return undefined;
}

async function startControl(env: VariantEnvironment, c: ControlCommand): Promise<ControlProcess> {
  const { name, ready } = c;
  const [cmd, ...rest] = [...env.pinning.sut, ...c.argv];
  const child = spawn(cmd as string, rest, { stdio: ['ignore', 'pipe', 'pipe'], cwd: env.root });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} was not ready in 20 s:\n${output}`)), 20_000);
    const onData = (d: Buffer): void => {
      output += d.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[2]));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    grpcPort: port,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}

/**
 * The `name=value` of the session cookie the first answer sets. Attach mode fails open: on a
 * busy machine the very first ext_proc answer can miss its 0.2 s, and that request gets no
 * policy and no cookie; a few more tries get one.
 */
async function sessionCookie(url: string, name: string): Promise<string> {
  let status = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    const res = await fetch(url);
    await res.arrayBuffer();
    status = res.status;
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
    if (set) return set.split(';')[0] as string;
  }
  throw new Error(`${url} set no ${name} cookie in 5 requests (last status ${status})`);
}

export async function startVariant(v: Variant, env: VariantEnvironment): Promise<RunningVariant> {
  if (v.envoyConfig === undefined) {
    return {
      host: env.backendAddresses[0] as string,
      port: env.backendPort,
      headers: {},
      envoyPid: undefined,
      controlPid: undefined,
      filterCounters: () => Promise.resolve(new Map()),
      stop: () => Promise.resolve(),
    };
  }
  const command = controlCommand(env, v);
  const serve = command ? await startControl(env, command) : undefined;
  if (serve) running.add(serve.stop);
  let envoy: EnvoyProcess;
  try {
    envoy = await startEnvoy({
      config: bindEnvoyConfig(v.envoyConfig, {
        backendAddresses: env.backendAddresses,
        backendPort: env.backendPort,
        wasmPath: env.wasmPath,
        nativePath: env.nativePath,
        ...(v.build ? { build: v.build } : {}),
        ...(serve ? { extProcPort: serve.grpcPort } : {}),
        ...(v.filterConfig !== undefined ? { filterConfig: v.filterConfig } : {}),
        ...(v.answerCache === false ? { answerCache: false } : {}),
      }),
      logLevel: 'error',
      args: ['--concurrency', '1'],
    });
  } catch (e) {
    await serve?.stop();
    if (serve) running.delete(serve.stop);
    throw e;
  }
  const stop = async (): Promise<void> => {
    running.delete(stop);
    await envoy.stop();
    await serve?.stop();
    if (serve) running.delete(serve.stop);
  };
  running.add(stop);
  try {
    if (envoy.child.pid !== undefined) env.pinning.pinSut(envoy.child.pid);
    const url = new URL(envoy.url());
    const headers: Record<string, string> = {};
    if (v.sessionCookie)
      headers['cookie'] = await sessionCookie(`${url.origin}${BENCH_PATH}`, v.sessionCookie);
    return {
      host: url.hostname,
      port: Number(url.port),
      headers,
      envoyPid: envoy.child.pid,
      controlPid: serve?.child.pid,
      filterCounters: async () => {
        const out = new Map<string, number>();
        // Summed over scopes: the native filter's upstream half counts under its cluster.
        for (const [k, n] of await envoy.stats()) {
          const m = /(?:^|\.)wasmcustom\.(steadfast_\w+)$/.exec(k);
          if (m?.[1]) out.set(m[1], (out.get(m[1]) ?? 0) + n);
        }
        return out;
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
