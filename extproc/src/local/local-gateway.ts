// A gateway on this machine: the control service, and Envoy fed from files that follow the
// configuration directory. Used by `steadfast dev` and `steadfast quickstart`. A changed
// file is compiled by the served configuration (the same ServedConfig `steadfast serve`
// answers from); a snapshot that compiles is turned into Envoy resources and written
// where Envoy watches; one that does not keeps the last good one.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayConfigOptions } from '../envoy/gateway-config.js';
import {
  type ControlService,
  prepareControlService,
  startControlService,
} from '../server/control-service.js';
import { type EnvoyProcess, startEnvoy } from './envoy-process.js';
import { GatewayFiles } from '../xds/gateway-files.js';
import { ServiceMetrics } from '../server/metrics.js';
import { type PortNeed, PortUnavailableError, checkPortsFree, splitHostPort } from './port-check.js';
import { chooseFilterBuild, type FilterChoice } from './filter-build.js';
import { envoyVersion } from './envoy-binary.js';
import { ServedConfig } from '../server/served-config.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import type { KeySource } from '../provider/key-source.js';
import type { Provider } from '../provider/provider.js';
import type { PolicyTable } from '../policy/policy-table.js';

export interface LocalGatewayOptions {
  /** Where the objects come from (files, a Kubernetes API server), started; its owner closes it. */
  readonly provider: Provider;
  /** Address Envoy's listeners bind. */
  readonly address: string;
  /** The control service's admin API port (0 picks one). */
  readonly adminPort: number;
  /** Envoy's admin port (0 picks one). */
  readonly envoyAdminPort: number;
  /** Base64 session keys; the first seals, all open. */
  readonly sessionKeys: readonly string[];
  /** A source of keys to follow while running (a Secret): a new ring reaches Envoy without a restart. */
  readonly followKeys?: KeySource;
  /** Bind ports by Gateway listener port (tests use 0-free ports). */
  readonly listenerPorts?: Readonly<Record<number, number>>;
  /** The control service's ext_proc address; default 127.0.0.1:0. */
  readonly grpcAddress?: string;
  /** The filter adds x-steadfast-policy to responses. */
  readonly debug?: boolean;
  /** Which build of the filter Envoy runs (filter-build.ts); default `auto`. */
  readonly filter?: FilterChoice;
  /** A filter build at this path instead (tests run a test-only build); its name says which kind. */
  readonly filterPath?: string;
  /** Extra Envoy flags, e.g. `--concurrency 1` (tests that need one worker). */
  readonly envoyArgs?: readonly string[];
  /** How long a pooled backend connection may sit idle (GatewayConfigOptions.upstreamIdleTimeout). */
  readonly upstreamIdleTimeout?: string;
  readonly debounceMs?: number;
  readonly log: (line: string) => void;
}

export interface LocalGatewayEvents {
  /** A configuration generation reached Envoy's files. */
  applied: [generation: number];
}

export interface LocalGateway extends EventEmitter<LocalGatewayEvents> {
  readonly envoy: EnvoyProcess;
  readonly control: ControlService;
  /** The configuration being served: generation, last failure, snapshot. */
  readonly config: ServedConfig;
  /** The last generation written for Envoy. */
  readonly appliedGeneration: number;
  stop(): Promise<void>;
}

/** The filter build Envoy loads: the one the options name, or the one `--filter` picks (said once when it falls back). */
function filterPath(options: LocalGatewayOptions): string {
  if (options.filterPath) return options.filterPath;
  const build = chooseFilterBuild(options.filter ?? 'auto', envoyVersion());
  if (build.fallback) options.log(build.fallback);
  return build.path;
}

/** A regular expression that matches exactly these names (RE2, as Envoy's admin reads it). */
function exactNames(names: readonly string[]): string {
  return `(?:${names.map((n) => n.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')).join('|')})`;
}

/**
 * Waits (up to 5 s) until Envoy lists every named cluster as active, i.e. warmed. Asks the
 * admin's config dump for just those clusters (`name_regex`, in batches): `/clusters` or a
 * stats filter walk every cluster, which took Envoy 0.5–1.5 s at 1,000 clusters, polled
 * while Envoy itself was loading the update.
 */
async function untilClustersActive(envoy: EnvoyProcess, names: readonly string[]): Promise<void> {
  const deadline = Date.now() + 5000;
  const batches: string[][] = [];
  for (let i = 0; i < names.length; i += 100) batches.push(names.slice(i, i + 100));
  let waiting = batches;
  for (;;) {
    const still: string[][] = [];
    for (const batch of waiting) {
      try {
        const q = new URLSearchParams({ resource: 'dynamic_active_clusters', name_regex: exactNames(batch) });
        const body = (await (await fetch(`${envoy.adminUrl}/config_dump?${q}`)).json()) as {
          configs?: unknown[];
        };
        if ((body.configs ?? []).length < batch.length) still.push(batch);
      } catch {
        // Envoy busy or stopping: try again until the deadline.
        still.push(batch);
      }
    }
    if (still.length === 0 || Date.now() > deadline) return;
    waiting = still;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Envoy's reason for refusing an update: its last log line that says so, without the log prefix. */
export function envoyRefusal(printed: string): string | undefined {
  const lines = printed
    .split('\n')
    .filter((l) => /rejected|error/i.test(l) && /\[(warning|error|critical)\]/.test(l));
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  const text = last.replace(/^(\[[^\]]*\]\s*)+/, '').trim();
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Envoy's count of LDS, RDS and CDS updates it refused. */
async function rejectedUpdates(envoy: EnvoyProcess): Promise<number> {
  try {
    const stats = await envoy.stats('update_rejected$');
    let total = 0;
    for (const [name, value] of stats) if (name.endsWith('.update_rejected')) total += value;
    return total;
  } catch {
    return 0;
  }
}

/** Envoy's counts of route (RDS) updates it took and refused, over every route configuration. */
async function routeUpdates(envoy: EnvoyProcess): Promise<{ taken: number; refused: number }> {
  const counts = { taken: 0, refused: 0 };
  try {
    for (const [name, value] of await envoy.stats('\\.rds\\..*\\.update_(success|rejected)$')) {
      if (name.endsWith('.update_rejected')) counts.refused += value;
      else if (name.endsWith('.update_success')) counts.taken += value;
    }
  } catch {
    // Envoy busy or stopping: counted as nothing yet.
  }
  return counts;
}

/**
 * Waits until Envoy has read each of the route files just written — it counts every file it
 * reads as taken or refused — and says whether it refused any. Not known within 5 s counts as
 * refused: the writer then keeps clusters a little longer, which is the safe side.
 */
async function routesRefused(
  envoy: EnvoyProcess,
  before: { taken: number; refused: number },
  written: number,
): Promise<boolean> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const now = await routeUpdates(envoy);
    if (now.refused > before.refused) return true;
    if (now.taken - before.taken >= written) return false;
    if (Date.now() > deadline) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every address:port the gateway will listen on, for checking before anything starts. */
export function gatewayPortNeeds(
  table: PolicyTable,
  options: Pick<
    LocalGatewayOptions,
    'address' | 'adminPort' | 'envoyAdminPort' | 'listenerPorts' | 'grpcAddress'
  >,
): PortNeed[] {
  const byPort = new Map<number, string[]>();
  for (const l of table.listeners) {
    if (l.protocol !== 'HTTP') continue;
    byPort.set(l.port, [...(byPort.get(l.port) ?? []), l.id]);
  }
  const needs: PortNeed[] = [...byPort].map(([port, ids]) => ({
    address: options.address,
    port: options.listenerPorts?.[port] ?? port,
    what: `Gateway listener ${ids.join(', ')}`,
    remedy:
      'stop the process that holds it, or change the listener port in the Gateway (or --address to bind another address)',
  }));
  needs.push(
    {
      address: '127.0.0.1',
      port: options.envoyAdminPort,
      what: "Envoy's admin interface",
      remedy: 'stop the process that holds it, or use --envoy-admin-port N (0 picks a free port)',
    },
    {
      address: '127.0.0.1',
      port: options.adminPort,
      what: "the control service's admin API",
      remedy: 'stop the process that holds it, or use --admin-port N (0 picks a free port)',
    },
  );
  const grpc = splitHostPort(options.grpcAddress ?? '127.0.0.1:0');
  if (grpc) {
    needs.push({
      ...grpc,
      what: "the control service's ext_proc server",
      remedy: 'stop the process that holds it, or choose another ext_proc address',
    });
  }
  return needs;
}

/** Envoy starts even when a listener cannot bind; a gateway that is not listening must not say ready. */
function checkListenersBound(envoy: EnvoyProcess, needs: readonly PortNeed[]): void {
  const bound = new Set([...envoy.listeners.values()].map((a) => Number(a.slice(a.lastIndexOf(':') + 1))));
  const listeners = needs.filter((n) => n.what.startsWith('Gateway listener'));
  const missing =
    listeners.find((n) => n.port !== 0 && !bound.has(n.port)) ??
    (envoy.listeners.size < listeners.length ? listeners.find((n) => n.port === 0) : undefined);
  if (!missing) return;
  const why = envoy
    .output()
    .split('\n')
    .filter((l) => /\[(error|critical)\]/.test(l))
    .slice(-1)
    .map((l) => l.replace(/^.*\]\s*/, ''));
  throw new PortUnavailableError(missing, `could not be bound by Envoy${why[0] ? ` (${why[0]})` : ''}`);
}

/** The served configuration, loaded, with every port the gateway needs checked free; closed on failure. */
async function loadConfig(
  options: LocalGatewayOptions,
  metrics: ServiceMetrics,
): Promise<{ config: ServedConfig; first: Snapshot; needs: PortNeed[] }> {
  const config = new ServedConfig({
    provider: options.provider,
    metrics,
    log: options.log,
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    whileCompiling: prepareControlService,
  });
  try {
    await config.start();
    const first = config.snapshot;
    if (!first) throw new Error('the configuration did not load');
    const needs = gatewayPortNeeds(first.table, options);
    await checkPortsFree(needs);
    return { config, first, needs };
  } catch (e) {
    config.close();
    throw e;
  }
}

/** What the file writer asks of Envoy, set once Envoy runs. */
interface EnvoyLink {
  envoy?: EnvoyProcess;
  /** Says whether Envoy took a generation (after it is written). */
  report?: (generation: number) => Promise<void>;
}

/** The writer of Envoy's files in `directory`: it waits for Envoy to take each update. */
function gatewayFiles(
  directory: string,
  wasmPath: string,
  options: LocalGatewayOptions,
  link: EnvoyLink,
): GatewayFiles {
  const envoy: GatewayConfigOptions = {
    address: options.address,
    admin: { address: '127.0.0.1', port: options.envoyAdminPort },
    wasmPath,
    sessionKeys: options.sessionKeys,
    ...(options.listenerPorts ? { listenerPorts: options.listenerPorts } : {}),
    ...(options.debug ? { debug: true } : {}),
    ...(options.upstreamIdleTimeout ? { upstreamIdleTimeout: options.upstreamIdleTimeout } : {}),
    exclusiveListeners: true,
  };
  return new GatewayFiles(directory, {
    envoy,
    log: options.log,
    untilClustersActive: (names) => (link.envoy ? untilClustersActive(link.envoy, names) : Promise.resolve()),
    watchRoutes: async () => {
      const running = link.envoy;
      if (!running) return async () => false;
      const before = await routeUpdates(running);
      return (written) => routesRefused(running, before, written);
    },
  });
}

/**
 * Envoy refuses an update it cannot load and keeps serving the previous one: after each
 * generation is written, says so, with Envoy's own reason, in the log and in /v1/status.
 */
async function rejectionReporter(
  envoy: EnvoyProcess,
  config: ServedConfig,
  log: (line: string) => void,
): Promise<(generation: number) => Promise<void>> {
  let rejected = await rejectedUpdates(envoy);
  let seen = envoy.output().length;
  return async (generation) => {
    await new Promise((r) => setTimeout(r, 500));
    const now = await rejectedUpdates(envoy);
    const printed = envoy.output();
    const fresh = printed.slice(seen);
    seen = printed.length;
    if (now > rejected) {
      const why = envoyRefusal(fresh);
      config.envoyResult(generation, why ?? 'Envoy gave no reason in its log');
      log(
        `Envoy rejected configuration generation ${generation} and keeps serving the previous one: ` +
          `${why ?? 'see its log'} (${envoy.adminUrl}/stats?filter=update_rejected)`,
      );
    } else {
      config.envoyResult(generation, undefined);
    }
    rejected = now;
  };
}

/** Runs `start`; when it fails, runs `undo` (in reverse order) and rethrows. */
async function orUndo<T>(start: () => Promise<T>, ...undo: (() => unknown)[]): Promise<T> {
  try {
    return await start();
  } catch (e) {
    for (const u of undo) await u();
    throw e;
  }
}

/** The control service beside the local Envoy: the admin API, and ext_proc. */
function startLocalControl(
  options: LocalGatewayOptions,
  config: ServedConfig,
  metrics: ServiceMetrics,
): Promise<ControlService> {
  return startControlService({
    grpcAddress: options.grpcAddress ?? '127.0.0.1:0',
    adminAddress: '127.0.0.1',
    adminPort: options.adminPort,
    // Gateway mode needs no callout: ext_proc still answers, for an Envoy attached next to this one.
    lookup: config.lookup,
    notReadyReason: () => config.notReadyReason(),
    metrics,
    config,
  });
}

/** Loads the configuration, writes Envoy's files, starts Envoy, then the control service. */
/**
 * Writes the first generation and every one swapped in after it (those that land while Envoy
 * starts too: the writer serializes them); returns what writes the current one again, as
 * `GENERATION.suffix` (new session keys).
 */
async function writeEachGeneration(
  config: ServedConfig,
  first: Snapshot,
  files: GatewayFiles,
  events: EventEmitter<LocalGatewayEvents>,
  link: EnvoyLink,
): Promise<(suffix: string) => Promise<void>> {
  const apply = async (snapshot: Snapshot, generation: number, version?: string): Promise<void> => {
    if (await files.apply(snapshot, generation, version)) events.emit('applied', generation);
  };
  let last = { snapshot: first, generation: config.generation };
  config.onSwap((snapshot, generation) => {
    last = { snapshot, generation };
    void apply(snapshot, generation).then(() => link.report?.(generation));
  });
  await apply(first, config.generation);
  return (suffix) => apply(last.snapshot, last.generation, `${last.generation}.${suffix}`);
}

/** Writes the current generation again with each new key ring the source gives. */
async function followKeys(
  keys: KeySource,
  files: GatewayFiles,
  log: (line: string) => void,
  rewrite: (version: string) => Promise<void>,
): Promise<void> {
  let epoch = 0;
  await keys.watch(
    (ring) => {
      files.useSessionKeys(ring.keys);
      log(
        `session keys from ${keys.description} changed: ${ring.ids.join(', ')} (the first seals); sent to Envoy`,
      );
      void rewrite(`keys${++epoch}`);
    },
    (why) => log(`${why}; the session keys in use stay`),
  );
}

export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const wasmPath = filterPath(options);
  const metrics = new ServiceMetrics();
  const { config, first, needs } = await loadConfig(options, metrics);
  const directory = mkdtempSync(join(tmpdir(), 'steadfast-gateway-'));
  const link: EnvoyLink = {};
  const files = gatewayFiles(directory, wasmPath, options, link);
  const events = new EventEmitter<LocalGatewayEvents>();
  const rewrite = await writeEachGeneration(config, first, files, events, link);
  const cleanup = (): void => {
    config.close();
    rmSync(directory, { recursive: true, force: true });
  };
  let started: EnvoyProcess | undefined;
  const envoy = await orUndo(
    async () => {
      started = await startEnvoy({
        config: files.bootstrap(),
        args: options.envoyArgs ?? [],
        guard: { removeOnOrphan: [directory] },
      });
      checkListenersBound(started, needs);
      return started;
    },
    () => started?.stop(),
    cleanup,
  );
  const control = await orUndo(
    () => startLocalControl(options, config, metrics),
    () => envoy.stop(),
    cleanup,
  );
  link.envoy = envoy;
  link.report = await rejectionReporter(envoy, config, options.log);
  if (options.followKeys) await followKeys(options.followKeys, files, options.log, rewrite);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      options.followKeys?.close();
      await envoy.stop();
      await control.stop();
      cleanup();
    })();
    return stopping;
  };
  return Object.defineProperties(events, {
    envoy: { value: envoy },
    control: { value: control },
    config: { value: config },
    appliedGeneration: { get: () => files.appliedGeneration },
    stop: { value: stop },
  }) as LocalGateway;
}
