// `steadfast serve`: the control service in attach mode — ext_proc over gRPC for an
// existing Envoy, plus the admin API. Loads and watches a configuration directory and
// resolves every request against it; prints one ready line, drains on SIGINT/SIGTERM.
// With --envoy-files DIR it also feeds a gateway-mode Envoy that runs elsewhere (docker
// compose's Envoy container): the bootstrap and every reload's resources, written into DIR.
// With --xds HOST:PORT it serves gateway mode to any number of Envoys over ADS (docs/fleet.md).
// The flags become frozen settings (serve-settings.ts); runners start each part, in order.
import { prepareControlService, untilSignalled } from '../../server/control-service.js';
import { ServiceMetrics } from '../../server/metrics.js';
import type { ServedConfig } from '../../server/served-config.js';
import type { AdsServer } from '../../xds/ads-server.js';
import { envoyProtoRoot } from '../../xds/envoy-protos.js';
import type { FlagSpecs } from '../args.js';
import type { Command, CommandIO } from '../command.js';
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
} from '../flags.js';
import { adsRunner } from '../run/ads-runner.js';
import { envoyFilesRunner } from '../run/envoy-files-runner.js';
import { extProcRunner } from '../run/ext-proc-runner.js';
import { keyWatchRunner } from '../run/key-watch-runner.js';
import { SERVE_XDS_FLAGS } from './xds-settings.js';
import { UPSTREAM_IDLE_TIMEOUT_FLAG } from '../upstream-idle-flag.js';
import { providerRunner } from '../run/provider-runner.js';
import { RunGroup } from '../run/runner.js';
import { KUBE_API_FLAGS } from '../kube-api-flags.js';
import { LEASE_FLAGS } from '../lease-flags.js';
import { servedConfigRunner } from '../run/served-config-runner.js';
import { type ServeSettings, serveSettings } from './serve-settings.js';

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
  ...LEASE_FLAGS,
  ...KUBE_API_FLAGS,
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
  ...SERVE_XDS_FLAGS,
  'upstream-idle-timeout': {
    ...UPSTREAM_IDLE_TIMEOUT_FLAG,
    description: `with --xds or --envoy-files: ${UPSTREAM_IDLE_TIMEOUT_FLAG.description}`,
  },
};

export const serveCommand: Command = {
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
    const log = (line: string) => io.err(`steadfast serve: ${line}`);
    return runServe(await serveSettings(parsed, io, log), io, log);
  },
};

/** Starts every part the settings ask for, says ready, and stops them all on a signal. */
async function runServe(
  settings: ServeSettings,
  io: CommandIO,
  log: (line: string) => void,
): Promise<number> {
  const group = new RunGroup();
  const service = await startServe(group, settings, log);
  if (settings.ring.ids.length > 0) {
    log(`session keys from ${settings.keys.description}: ${settings.ring.ids.join(', ')} (the first seals)`);
  }
  for (const line of settings.tokenPolicy) log(line);
  // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
  const signalled = untilSignalled();
  io.out(
    `steadfast serve: ready; ext_proc on ${service.grpcAddress}; admin on ${service.adminUrl}` +
      (service.ads ? `; xds on ${service.ads.address}` : ''),
  );
  await signalled;
  io.out('steadfast serve: draining');
  await group.stop();
  io.out('steadfast serve: stopped');
  return 0;
}

/**
 * What the runners after the configuration would do first, done while the first configuration
 * compiles on its own thread (this one waits meanwhile, ~1.5 s at 10,000 routes): one process
 * serving ext_proc readies its gRPC server; Envoy's protos (~0.2 s), which ADS and the Envoy
 * files' route encoding read first, are read.
 */
function prepareWhileCompiling(settings: ServeSettings): void {
  if (settings.workers <= 1) prepareControlService();
  if (settings.xds || settings.envoyFiles !== undefined) envoyProtoRoot();
}

/** The runners, in order: provider, configuration, Envoy files, ADS, key watch, ext_proc and admin. */
async function startServe(group: RunGroup, settings: ServeSettings, log: (line: string) => void) {
  const metrics = new ServiceMetrics();
  const tls = settings.xds?.tls;
  const tlsSecrets = tls && 'watchStates' in tls ? tls : undefined;
  if (settings.keys.watchStates || tlsSecrets?.watchStates) {
    metrics.followSecretWatches(() => [
      ...(settings.keys.watchStates?.() ?? []),
      ...(tlsSecrets?.watchStates?.() ?? []),
    ]);
  }
  let config: ServedConfig | undefined;
  let ads: AdsServer | undefined;
  if (settings.provider) {
    const provider = settings.provider;
    const configRunner = servedConfigRunner({
      provider,
      metrics,
      log,
      whileCompiling: () => prepareWhileCompiling(settings),
    });
    // The compiler's thread loads its modules while a cluster is listed (~0.5 s at 10,000 routes).
    configRunner.prepare();
    await group.start(providerRunner(provider)).catch((e: unknown) => {
      void configRunner.stop();
      throw e;
    });
    config = await group.start(configRunner);
    if (settings.envoyFiles !== undefined) {
      const idle = settings.upstreamIdleTimeout;
      const envoy = {
        keys: settings.ring.keys,
        ...(idle !== undefined ? { upstreamIdleTimeout: idle } : {}),
      };
      await group.start(envoyFilesRunner(settings.envoyFiles, config, envoy, log));
    }
    // Read at every push: a new key ring goes out with the next one.
    const filter = {
      wasmPath: settings.xds?.wasmPath ?? '',
      sessionKeys: settings.ring.keys,
      ...(settings.upstreamIdleTimeout !== undefined
        ? { upstreamIdleTimeout: settings.upstreamIdleTimeout }
        : {}),
    };
    if (settings.xds) ads = await group.start(adsRunner(settings.xds, config, filter, log));
    const served = config;
    await group.start(
      keyWatchRunner(settings.keys, filter, { ads, generation: () => served.generation }, log),
    );
  }
  const answers = config ? { config } : { staticToken: settings.staticToken as string };
  const service = await group.start(extProcRunner(settings, answers, ads, metrics, log));
  return { grpcAddress: service.grpcAddress, adminUrl: service.adminUrl, ads };
}
