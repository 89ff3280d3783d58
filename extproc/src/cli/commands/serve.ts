// `steadfast serve`: the control service in attach mode — ext_proc over gRPC for an
// existing Envoy, plus the admin API. Loads and watches a configuration directory and
// resolves every request against it; prints one ready line, drains on SIGINT/SIGTERM.
// With --envoy-files DIR it also feeds a gateway-mode Envoy that runs elsewhere (docker
// compose's Envoy container): the bootstrap and every reload's resources, written into DIR.
// With --xds HOST:PORT it serves gateway mode to any number of Envoys over ADS (docs/fleet.md).
import { rename, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { COMPOSE_DEMO_SESSION_KEY, composeGatewayOptions } from '../../envoy/compose-preset.js';
import type { PolicyLookup } from '../../server/grpc/ext-proc-service.js';
import { prepareControlService, startControlService, untilSignalled } from '../../server/control-service.js';
import { defaultExtProcWorkers, startExtProcWorkers } from '../../server/ext-proc-workers.js';
import { GatewayFiles } from '../../xds/gateway-files.js';
import { AdsServer } from '../../xds/ads-server.js';
import type { GatewayConfigOptions } from '../../envoy/gateway-config.js';
import { GenerationMemo } from '../../envoy/generation-memo.js';
import { xdsResources } from '../../envoy/xds-resources.js';
import { projectRoot } from '../../local/project-root.js';
import { ServiceMetrics } from '../../server/metrics.js';
import { checkPortsFree, splitHostPort } from '../../local/port-check.js';
import { ServedConfig } from '../../server/served-config.js';
import { explainPolicy } from '../../resolve/resolve-answer.js';
import { checkPolicyToken } from '../../table/policy-token-check.js';
import { type FlagSpecs, boolFlag, flag, intFlag } from '../args.js';
import { type Command, UsageError } from '../command.js';
import { checkConfigPaths } from '../config-paths.js';
import {
  ADMIN_PORT,
  ALLOW_EMPTY,
  CONFIG,
  EXT_PROC_ADDRESS_DEFAULT,
  IN_CLUSTER,
  KUBECONFIG,
  SESSION_KEY,
  SESSION_KEY_FILE,
  SESSION_KEY_SECRET,
  XDS_TOKEN_FILE,
  readXdsToken,
} from '../flags.js';
import { readKeys, sourcesOf } from '../sources.js';

const SERVE_FLAGS: FlagSpecs = {
  config: CONFIG,
  kubeconfig: KUBECONFIG,
  'in-cluster': IN_CLUSTER,
  'ext-proc-address': {
    type: 'string',
    value: 'HOST:PORT',
    description:
      'where the ext_proc gRPC server listens (what envoy-config --ext-proc-address points Envoy at)',
    default: EXT_PROC_ADDRESS_DEFAULT,
    aliases: ['grpc-address'],
  },
  'admin-address': {
    type: 'string',
    value: 'ADDR',
    description: 'the address the admin API binds',
    default: '127.0.0.1',
  },
  'admin-port': ADMIN_PORT,
  workers: {
    type: 'string',
    value: 'N',
    description: 'ext_proc worker processes sharing the port (docs/attach.md, "Workers")',
    default: '1 up to 2 CPUs, else one per two CPUs, at most 8',
  },
  'session-key-file': {
    ...SESSION_KEY_FILE,
    description: `${SESSION_KEY_FILE.description}; serve only checks them and logs their ids (the filter seals)`,
  },
  'session-key': SESSION_KEY,
  'session-key-secret': SESSION_KEY_SECRET,
  'policy-token': {
    type: 'string',
    value: 'TOKEN',
    description:
      'answer every request with this policy token instead of loading --config: a wiring check (a token from `steadfast resolve`)',
  },
  'allow-empty': ALLOW_EMPTY,
  'envoy-files': {
    type: 'string',
    value: 'DIR',
    description:
      'also write a gateway-mode Envoy bootstrap and every reload into DIR, for an Envoy that runs elsewhere (docker compose)',
  },
  xds: {
    type: 'string',
    value: 'HOST:PORT',
    description:
      'also serve gateway mode over ADS to any number of Envoys (their bootstrap: envoy-config --xds HOST:PORT; docs/fleet.md)',
  },
  'xds-token-file': XDS_TOKEN_FILE,
  'xds-wasm-path': {
    type: 'string',
    value: 'PATH',
    description: 'where the Envoys fed over ADS find steadfast.wasm on their own machines',
    default: "this checkout's filter/build/steadfast.wasm",
  },
};

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the control service for an existing Envoy (ext_proc + admin API)',
  usage:
    'steadfast serve --config PATH [options]\n       steadfast serve --kubeconfig FILE [options]\n' +
    '       steadfast serve --policy-token TOKEN [options]',
  description:
    'The control service in attach mode: loads and watches the Gateway API YAML, answers\n' +
    "Envoy's ext_proc stream with the policy of the rule each request matches, and serves the\n" +
    'admin API. Checks its ports first; prints one ready line; drains on Ctrl-C or SIGTERM.',
  flags: SERVE_FLAGS,
  positionals: 'PATH... — the same as --config PATH',
  async run(parsed, io) {
    const grpcAddress = flag(parsed, 'ext-proc-address') ?? EXT_PROC_ADDRESS_DEFAULT;
    if (!/^\S+:\d{1,5}$/.test(grpcAddress))
      throw new UsageError(`--ext-proc-address: "${grpcAddress}" is not HOST:PORT`);
    const log = (line: string) => io.err(`steadfast serve: ${line}`);
    const { provider, keys, configPaths } = await sourcesOf(parsed, log);
    // A fixed token for every request: checks Envoy's wiring before a configuration exists.
    const staticToken = flag(parsed, 'policy-token');
    if (!provider && staticToken === undefined) {
      throw new UsageError(
        'give --config PATH or --kubeconfig FILE (or --policy-token TOKEN to check the wiring)',
      );
    }
    if (provider && staticToken !== undefined) {
      throw new UsageError(
        `${configPaths.length === 0 ? '--kubeconfig' : '--config'} and --policy-token exclude each other`,
      );
    }
    const loadsConfig = provider !== undefined;
    const envoyFiles = flag(parsed, 'envoy-files');
    if (envoyFiles !== undefined && !loadsConfig) {
      throw new UsageError(
        '--envoy-files needs --config or --kubeconfig: it writes the gateway configuration of those objects',
      );
    }
    const xdsAddress = flag(parsed, 'xds');
    if (xdsAddress !== undefined && !loadsConfig) {
      throw new UsageError(
        '--xds needs --config or --kubeconfig: it serves the gateway configuration of those objects',
      );
    }
    if (xdsAddress !== undefined && !/^\S+:\d{1,5}$/.test(xdsAddress)) {
      throw new UsageError(`--xds: "${xdsAddress}" is not HOST:PORT`);
    }
    const xdsTokenFile = flag(parsed, 'xds-token-file');
    if (xdsAddress !== undefined && xdsTokenFile === undefined && !isLoopbackHostPort(xdsAddress)) {
      throw new UsageError(
        `--xds ${xdsAddress} is reachable from other machines: give --xds-token-file FILE, as the ADS stream carries the session keys and HTTPS private keys (docs/fleet.md)`,
      );
    }
    const xdsToken = xdsTokenFile !== undefined ? await readXdsToken(xdsTokenFile) : undefined;
    let tokenPolicy: string[] | undefined;
    if (staticToken !== undefined) {
      let checked;
      try {
        checked = checkPolicyToken(staticToken);
      } catch (e) {
        throw new UsageError(`--policy-token: ${(e as Error).message} (docs/policy-token.md)`);
      }
      tokenPolicy = [
        `every request gets the policy of ${checked.policy.rule}: ${explainPolicy(checked.policy).join('; ')}`,
        ...(checked.unknownKeys.length > 0
          ? [`warning: --policy-token has keys this version does not know: ${checked.unknownKeys.join(', ')}`]
          : []),
      ];
    }
    const workers = intFlag(parsed, 'workers', defaultExtProcWorkers(availableParallelism()), 1, 64);
    const adminAddress = flag(parsed, 'admin-address') ?? '127.0.0.1';
    const adminPort = intFlag(parsed, 'admin-port', 9902);
    // serve seals nothing: the keys live in the filter's configuration (docs/attach.md, or the
    // files --envoy-files writes).
    // It checks them so a bad ring is caught here, and names the keys by id.
    const ring = await readKeys(keys);
    const keyIds = ring.ids.length > 0 ? ring.ids : undefined;
    if (xdsAddress !== undefined && ring.keys.length === 0) {
      throw new UsageError(
        '--xds needs --session-key-file, --session-key or --session-key-secret: every Envoy of the fleet seals and opens sessions with the same keys',
      );
    }

    if (configPaths.length > 0) {
      await checkConfigPaths(configPaths, boolFlag(parsed, 'allow-empty'), io, 'steadfast serve');
    }
    const grpc = splitHostPort(grpcAddress);
    const xdsListen = xdsAddress !== undefined ? splitHostPort(xdsAddress) : undefined;
    await checkPortsFree([
      ...(xdsListen
        ? [
            {
              ...xdsListen,
              what: 'the ADS server',
              remedy: 'stop the process that holds it (another serve --xds?), or use --xds HOST:PORT',
            },
          ]
        : []),
      ...(grpc
        ? [
            {
              ...grpc,
              what: 'the ext_proc server',
              remedy: 'stop the process that holds it (another serve?), or use --ext-proc-address HOST:PORT',
            },
          ]
        : []),
      {
        address: adminAddress,
        port: adminPort,
        what: 'the admin API',
        remedy: 'stop the process that holds it, or use --admin-port N (0 picks a free port)',
      },
    ]);

    const metrics = new ServiceMetrics();
    await provider?.start().catch((e: unknown) => {
      provider.close();
      throw e;
    });
    // One process serves ext_proc: it readies its gRPC server while the configuration compiles.
    const whileCompiling = workers > 1 ? {} : { whileCompiling: prepareControlService };
    const config = provider ? new ServedConfig({ provider, metrics, log, ...whileCompiling }) : undefined;
    await config?.start();
    if (config && envoyFiles !== undefined) await feedEnvoyFiles(envoyFiles, config, ring?.keys ?? [], log);
    let ads: AdsServer | undefined;
    const xdsFilter = {
      wasmPath: flag(parsed, 'xds-wasm-path') ?? join(projectRoot(), 'filter/build/steadfast.wasm'),
      sessionKeys: ring.keys,
    };
    if (config && xdsAddress !== undefined) {
      try {
        ads = await serveXds(xdsAddress, config, xdsFilter, xdsToken, log);
      } catch (e) {
        config.close();
        throw new Error(`cannot serve ADS on ${xdsAddress}: ${(e as Error).message}`);
      }
    }
    if (config) {
      // A new key ring (from a Secret) reaches every Envoy of the fleet with the next push.
      let epoch = 0;
      await keys.watch(
        (next) => {
          if (next.keys.join() === xdsFilter.sessionKeys.join()) return;
          xdsFilter.sessionKeys = next.keys;
          if (ads) {
            ads.update(`${config.generation}.keys${++epoch}`);
            log(
              `session keys from ${keys.description} changed: ${next.ids.join(', ')} (the first seals); sent to every Envoy`,
            );
          } else {
            log(
              `session keys in ${keys.description} changed: ${next.ids.join(', ')}; ` +
                "serve only checks them: the Envoys' filter configuration holds the keys (docs/attach.md)",
            );
          }
        },
        (why) => log(`${why}; the session keys in use stay`),
      );
    }
    const lookup: PolicyLookup = config ? config.lookup : () => staticToken;
    // A fixed token reads no header at all.
    const noHeaders: ReadonlySet<string> = new Set();
    const headersRead = config ? config.headersRead : () => noHeaders;
    const notReadyReason = config ? () => config.notReadyReason() : () => null;

    const service =
      workers > 1
        ? await startExtProcWorkers({
            workers,
            grpcAddress,
            adminAddress,
            adminPort,
            metrics,
            notReadyReason,
            log,
            ...(config ? { config } : { staticToken: staticToken as string }),
            ...(ads ? { xds: () => (ads as AdsServer).status() } : {}),
          })
        : await startControlService({
            grpcAddress,
            adminAddress,
            adminPort,
            lookup,
            headersRead,
            metrics,
            notReadyReason,
            ...(config ? { config } : {}),
            ...(ads ? { xds: () => (ads as AdsServer).status() } : {}),
            onError: (e) => log(e instanceof Error ? e.message : String(e)),
          });
    if (workers > 1) log(`${workers} ext_proc worker processes share ${service.grpcAddress}`);
    if (keyIds) log(`session keys from ${keys.description}: ${keyIds.join(', ')} (the first seals)`);
    for (const line of tokenPolicy ?? []) log(line);
    // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
    const signalled = untilSignalled();
    io.out(
      `steadfast serve: ready; ext_proc on ${service.grpcAddress}; admin on ${service.adminUrl}` +
        (ads ? `; xds on ${ads.address}` : ''),
    );
    await signalled;
    io.out('steadfast serve: draining');
    config?.close();
    keys.close();
    provider?.close();
    await Promise.all([service.stop(), ads?.stop()]);
    io.out('steadfast serve: stopped');
    return 0;
  },
};

/**
 * The ADS server for a fleet of gateway-mode Envoys: every generation the configuration
 * swaps in is pushed to each of them. An Envoy's listeners bind the address its bootstrap
 * names as its kind (envoy-config --xds --address), 0.0.0.0 when it names none.
 */
async function serveXds(
  address: string,
  config: ServedConfig,
  /** Read at every push: a new key ring goes out with the next one. */
  filter: { readonly wasmPath: string; readonly sessionKeys: readonly string[] },
  token: string | undefined,
  log: (line: string) => void,
): Promise<AdsServer> {
  let snapshot = config.snapshot;
  // Per kind of Envoy, what the last generation made, for options that stay the same (a new
  // key ring makes new ones): a one-route change generates that route alone.
  type Kept = { readonly key: string; readonly options: GatewayConfigOptions; readonly memo: GenerationMemo };
  const kept = new Map<string, Kept>();
  const ads = new AdsServer({
    resources: (kind) => {
      if (!snapshot) throw new Error('no configuration loaded yet');
      const options = { ...filter, address: kind === '' ? '0.0.0.0' : kind };
      const key = JSON.stringify(options);
      let k = kept.get(kind);
      if (k?.key !== key) kept.set(kind, (k = { key, options, memo: new GenerationMemo(options) }));
      // The options the memo was made for, as the same object: it serves only those.
      return xdsResources(snapshot.table, k.options, snapshot.tls, k.memo);
    },
    log,
    ...(token !== undefined ? { token } : {}),
  });
  // Before listening, so that no generation swapped in meanwhile is missed.
  config.onSwap((next, generation) => {
    snapshot = next;
    ads.update(String(generation));
  });
  const bound = await ads.start(address);
  snapshot = config.snapshot;
  if (snapshot) ads.update(String(config.generation));
  log(
    `ADS on ${bound}: gateway mode for any number of Envoys (their bootstrap: envoy-config --xds ${bound})`,
  );
  return ads;
}

/** The host of HOST:PORT is a loopback address (or localhost). */
function isLoopbackHostPort(hostPort: string): boolean {
  const host = hostPort.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Writes the bootstrap (DIR/envoy.yaml) and the first generation's resources before the control
 * service says ready (compose starts Envoy once it is healthy), then every later generation.
 * The container preset: listeners and Envoy's admin (9901) on 0.0.0.0, the filter at
 * filter/build/steadfast.wasm under Envoy's working directory, the debug header on.
 */
async function feedEnvoyFiles(
  directory: string,
  config: ServedConfig,
  keys: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  if (keys.length === 0) {
    log(
      `warning: no --session-keys file; Envoy seals sessions with the PUBLISHED demo key ` +
        `(${COMPOSE_DEMO_SESSION_KEY.slice(0, 8)}…): anyone can forge them. Use it for the demo only.`,
    );
  }
  const files = new GatewayFiles(directory, { envoy: composeGatewayOptions(keys), log });
  config.onSwap((snapshot, generation) => {
    void files.apply(snapshot, generation).then((ok) => {
      if (ok) log(`configuration generation ${generation} written for Envoy (${directory})`);
    });
  });
  const first = config.snapshot;
  if (first) await files.apply(first, config.generation);
  const tmp = join(directory, `.envoy.yaml.${process.pid}.tmp`);
  await writeFile(tmp, files.bootstrap());
  await rename(tmp, join(directory, 'envoy.yaml'));
  log(`Envoy bootstrap ${join(directory, 'envoy.yaml')}; its resources follow the configuration`);
}
