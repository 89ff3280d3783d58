// `steadfast serve`'s flags, checked and frozen before anything starts: the sources, the
// addresses, the fixed token or the configuration, and every port free.
import { availableParallelism } from 'node:os';
import { checkPortsFree, splitHostPort } from '../../local/port-check.js';
import type { KeySource, SessionKeyRing } from '../../provider/key-source.js';
import type { Provider } from '../../provider/provider.js';
import { explainPolicy } from '../../resolve/resolve-answer.js';
import { defaultExtProcWorkers } from '../../server/ext-proc-workers.js';
import { checkPolicyToken } from '../../policy/policy-token.js';
import { type ParsedArgs, boolFlag, flag, intFlag } from '../args.js';
import { type CommandIO, UsageError } from '../command.js';
import { checkConfigPaths } from '../config-paths.js';
import { EXT_PROC_ADDRESS_DEFAULT } from '../flags.js';
import type { AdsSettings } from '../run/ads-runner.js';
import type { ExtProcSettings } from '../run/ext-proc-runner.js';
import { readKeys, sourcesOf } from '../sources.js';
import { upstreamIdleTimeoutOf } from '../upstream-idle-flag.js';
import { adsSettingsOf } from './xds-settings.js';

export interface ServeSettings extends ExtProcSettings {
  /** Where the objects come from; undefined with --policy-token. */
  readonly provider: Provider | undefined;
  readonly keys: KeySource;
  /** The ring the key source held at start: serve checks it and names it (the filter seals). */
  readonly ring: SessionKeyRing;
  /** `--policy-token`: every request gets it; a wiring check before a configuration exists. */
  readonly staticToken: string | undefined;
  /** What the fixed token means, for the log. */
  readonly tokenPolicy: readonly string[];
  readonly envoyFiles: string | undefined;
  readonly xds: AdsSettings | undefined;
  /** The backend clusters' idle timeout in the Envoy files and over ADS; undefined: the generator's default. */
  readonly upstreamIdleTimeout: string | undefined;
}

export async function serveSettings(
  parsed: ParsedArgs,
  io: CommandIO,
  log: (line: string) => void,
): Promise<ServeSettings> {
  const grpcAddress = flag(parsed, 'ext-proc-address') ?? EXT_PROC_ADDRESS_DEFAULT;
  if (!/^\S+:\d{1,5}$/.test(grpcAddress))
    throw new UsageError(`--ext-proc-address: "${grpcAddress}" is not HOST:PORT`);
  const upstreamIdleTimeout = gatewayIdleTimeoutOf(parsed);
  const { provider, keys, configPaths, kube } = await sourcesOf(parsed, log);
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
  const envoyFiles = flag(parsed, 'envoy-files');
  if (envoyFiles !== undefined && !provider) {
    throw new UsageError(
      '--envoy-files needs --config or --kubeconfig: it writes the gateway configuration of those objects',
    );
  }
  const xds = await adsSettingsOf(parsed, provider !== undefined, kube, log);
  const tokenPolicy = staticToken !== undefined ? tokenPolicyOf(staticToken) : [];
  const settings = {
    grpcAddress,
    adminAddress: flag(parsed, 'admin-address') ?? '127.0.0.1',
    adminPort: intFlag(parsed, 'admin-port', 9902),
    workers: intFlag(parsed, 'workers', defaultExtProcWorkers(availableParallelism()), 1, 64),
  };
  // serve seals nothing: the keys live in the filter's configuration (docs/attach.md, or the
  // files --envoy-files writes). It checks them so a bad ring is caught here, and names the keys by id.
  const ring = await readKeys(keys);
  if (xds && ring.keys.length === 0) {
    throw new UsageError(
      '--xds needs --session-key-file, --session-key or --session-key-secret: every Envoy of the fleet seals and opens sessions with the same keys',
    );
  }
  if (configPaths.length > 0) {
    await checkConfigPaths(configPaths, boolFlag(parsed, 'allow-empty'), io, 'steadfast serve');
  }
  await checkServePortsFree(settings, xds?.address);
  return Object.freeze({
    ...settings,
    provider,
    keys,
    ring,
    staticToken,
    tokenPolicy,
    envoyFiles,
    xds,
    upstreamIdleTimeout,
  });
}

/** --upstream-idle-timeout, which only the clusters serve generates (--xds, --envoy-files) take. */
function gatewayIdleTimeoutOf(parsed: ParsedArgs): string | undefined {
  const timeout = upstreamIdleTimeoutOf(parsed);
  if (timeout !== undefined && !parsed.flags.has('xds') && !parsed.flags.has('envoy-files')) {
    throw new UsageError(
      '--upstream-idle-timeout sets the clusters of --xds and --envoy-files; in attach mode the clusters are your own (envoy-config --mode attach prints it for them)',
    );
  }
  return timeout;
}

/** The log lines that say what a fixed --policy-token does; a token that does not decode is a usage error. */
function tokenPolicyOf(token: string): string[] {
  let checked;
  try {
    checked = checkPolicyToken(token);
  } catch (e) {
    throw new UsageError(`--policy-token: ${(e as Error).message} (docs/policy-token.md)`);
  }
  return [
    `every request gets the policy of ${checked.policy.rule}: ${explainPolicy(checked.policy).join('; ')}`,
    ...(checked.unknownKeys.length > 0
      ? [`warning: --policy-token has keys this version does not know: ${checked.unknownKeys.join(', ')}`]
      : []),
  ];
}

/** Every port serve binds, checked before anything starts. */
async function checkServePortsFree(settings: ExtProcSettings, xdsAddress: string | undefined): Promise<void> {
  const grpc = splitHostPort(settings.grpcAddress);
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
      address: settings.adminAddress,
      port: settings.adminPort,
      what: 'the admin API',
      remedy: 'stop the process that holds it, or use --admin-port N (0 picks a free port)',
    },
  ]);
}
