// Attach mode end to end: echo backends on 127.0.0.2–4 (one shared attempt ledger, one
// port), a Gateway API config directory, the real `steadfast serve` on it, and the pinned
// Envoy running envoy/attach-example.yaml pointed at both.
import type { FilterBuildName } from '../../support/filter-builds.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AttemptLedger } from '../../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../../backends/running-backend.js';
import { extProcForwardRules } from '../../../extproc/src/envoy/attach-snippet.js';
import { startEnvoy, type EnvoyProcess } from '../../../extproc/src/local/envoy-process.js';
import { compileSnapshot } from '../../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../../support/paths.js';
import { type AttachRoute, type ConfigDir, baseObjectsYaml, configDir, routesYaml } from './attach-config.js';
import { getOnce } from './bounded-load.js';
import { startControlService, type ControlServiceHandle } from './control-service.js';
import { rewriteEnvoyConfig } from './envoy-config-rewrite.js';

export const BACKEND_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;

export interface AttachStack {
  readonly backends: readonly RunningBackend[];
  readonly config: ConfigDir;
  control: ControlServiceHandle;
  readonly envoy: EnvoyProcess;
  /** `http://127.0.0.1:<port>` of Envoy's listener. */
  readonly url: string;
  /** Starts `steadfast serve` again on the same gRPC port (after it was stopped or killed). */
  restartControl(): Promise<ControlServiceHandle>;
  /** The routes file of the config dir, replaced atomically. */
  writeRoutes(routes: readonly AttachRoute[] | string): void;
  stop(): Promise<void>;
}

export interface AttachStackOptions {
  readonly routes: readonly AttachRoute[] | string;
  /** The gRPC port of `steadfast serve`; 0 picks one (then a restart may not get it back). */
  readonly grpcPort?: number;
  /** Extra `steadfast serve` flags, e.g. `--workers 2`. */
  readonly serveArgs?: readonly string[];
  /** The downstream filter's configuration, e.g. with session keys. */
  readonly filterConfig?: string;
  /** Extra Envoy flags, e.g. `--concurrency 1`. */
  readonly envoyArgs?: readonly string[];
  /** false: the answer cache off (as `envoy-config --mode attach --answer-cache off` prints it). */
  readonly answerCache?: boolean;
  /** How long `steadfast serve` may take to load the configuration and be ready. */
  readonly readyTimeoutMs?: number;
  /** The filter build Envoy loads (default: the example's steadfast.wasm). */
  readonly build?: FilterBuildName;
}

export async function startAttachStack(options: AttachStackOptions): Promise<AttachStack> {
  const ledger = new AttemptLedger();
  const backends: RunningBackend[] = [];
  const cleanup: Array<() => Promise<void> | void> = [];
  try {
    for (const address of BACKEND_ADDRESSES) {
      const port = backends[0]?.port ?? 0;
      const b = await startEchoBackend({ address, port, name: `attach-${address}`, ledger });
      backends.push(b);
      cleanup.push(() => b.close());
    }
    const port = (backends[0] as RunningBackend).port;
    const routesText = (r: readonly AttachRoute[] | string) => (typeof r === 'string' ? r : routesYaml(r));
    const files = {
      'base.yaml': baseObjectsYaml(backends, port),
      'routes.yaml': routesText(options.routes),
    };
    const config = configDir(files);
    cleanup.push(() => config.remove());
    const serveArgs = [
      'serve',
      '--config',
      config.path,
      '--ext-proc-address',
      `127.0.0.1:${options.grpcPort ?? 0}`,
      '--admin-port',
      '0',
      ...(options.serveArgs ?? []),
    ];
    const ready = { readyTimeoutMs: options.readyTimeoutMs ?? 60_000 };
    let control = await startControlService(serveArgs, ready);
    cleanup.push(() => void control.stop());
    const grpcPort = control.grpcPort;
    const envoyConfig = rewriteEnvoyConfig(
      readFileSync(join(REPO_ROOT, 'envoy/attach-example.yaml'), 'utf8'),
      {
        clusters: {
          app: backends.map((b) => ({ address: b.address, port: b.port })),
          steadfast_extproc: [{ address: '127.0.0.1', port: grpcPort }],
        },
        ...(options.filterConfig === undefined ? {} : { filterConfig: options.filterConfig }),
        // As an operator deploys it: the snippet's forward_rules for these rules.
        extProcForwardRules: extProcForwardRules(
          compileSnapshot(Object.entries(files).map(([path, text]) => ({ path, text }))).ir,
        ),
        ...(options.answerCache === false ? { answerCache: false } : {}),
        ...(options.build === undefined ? {} : { build: options.build }),
      },
    );
    const envoy = await startEnvoy({ config: envoyConfig, args: options.envoyArgs ?? [] });
    cleanup.push(() => envoy.stop());
    await untilExtProcAnswers(envoy, envoy.url('ingress'));
    const stack: AttachStack = {
      backends,
      config,
      get control() {
        return control;
      },
      set control(c) {
        control = c;
      },
      envoy,
      url: envoy.url('ingress'),
      async restartControl() {
        const args = [...serveArgs];
        args[args.indexOf('--ext-proc-address') + 1] = `127.0.0.1:${grpcPort}`;
        control = await startControlService(args, ready);
        return control;
      },
      writeRoutes: (r) => config.write('routes.yaml', routesText(r)),
      async stop() {
        await envoy.stop();
        await control.stop();
        await Promise.all(backends.map((b) => b.close()));
        config.remove();
      },
    };
    return stack;
  } catch (e) {
    for (const c of cleanup.reverse()) await c();
    throw e;
  }
}

/**
 * Readiness of the ext_proc path: each Envoy worker opens its own HTTP/2 connection to the
 * control service on its first request, and the first request also meets the service's cold
 * code; on a loaded machine such a request can miss message_timeout and go on without policy
 * (a flake hunt saw the ten requests of a burst that landed on the cold worker all miss it).
 * Returns once every worker holds its connection and a request got its answer in time (each
 * try is one unmatched GET on a new connection, so the kernel spreads them over the workers),
 * or throws after `withinMs`.
 */
export async function untilExtProcAnswers(
  envoy: EnvoyProcess,
  url: string,
  withinMs = 30_000,
): Promise<void> {
  const stat = async (): Promise<Map<string, number>> => envoy.stats();
  const info = (await (await fetch(`${envoy.adminUrl}/server_info`)).json()) as {
    command_line_options: { concurrency: number };
  };
  const workers = info.command_line_options.concurrency;
  const deadline = performance.now() + withinMs;
  for (let n = 0; ; n++) {
    const before = await stat();
    // A path of its own each time, so the answer cache never answers it in ext_proc's place.
    await getOnce(`${url}/__steadfast-warm-up/${n}`, { host: 'warm-up.invalid' });
    const after = await stat();
    const d = (name: string) =>
      (after.get(`http.ingress.ext_proc.${name}`) ?? 0) - (before.get(`http.ingress.ext_proc.${name}`) ?? 0);
    const connected = after.get('cluster.steadfast_extproc.upstream_cx_active') ?? 0;
    const inTime =
      d('stream_msgs_received') > 0 && d('message_timeouts') === 0 && d('failure_mode_allowed') === 0;
    if (inTime && connected >= workers) return;
    if (performance.now() > deadline)
      throw new Error(`ext_proc did not answer in time within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls `check` every `everyMs` until it returns true or `withinMs` passes; returns the ms it took. */
export async function within(withinMs: number, check: () => Promise<boolean>, everyMs = 25): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > withinMs) {
      throw new Error(`condition not met within ${withinMs} ms`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
