// `steadfast dev --config <dir>`: a local gateway — Envoy on each Gateway listener's port,
// configured from the directory and reloaded when it changes, and the control service.
// Prints one ready line; SIGINT/SIGTERM stop Envoy and exit 0.
import { untilSignalled } from '../../server/control-service.js';
import { generateSessionKey } from '../../provider/key-files.js';
import { type FlagSpecs, type ParsedArgs, boolFlag, flag, intFlag } from '../args.js';
import { type Command, type CommandIO, UsageError } from '../command.js';
import { checkConfigPaths } from '../config-paths.js';
import {
  ADDRESS,
  ADMIN_PORT,
  ALLOW_EMPTY,
  CONFIG,
  ENVOY_ADMIN_PORT,
  IN_CLUSTER,
  KUBECONFIG,
  SESSION_KEY,
  SESSION_KEY_FILE,
  SESSION_KEY_SECRET,
  filterChoiceOf,
  filterFlag,
} from '../flags.js';
import type { LocalGatewayOptions } from '../../local/local-gateway.js';
import type { KeySource } from '../../provider/key-source.js';
import { type RunningGateway, localGatewayRunner } from '../run/local-gateway-runner.js';
import { providerRunner } from '../run/provider-runner.js';
import { RunGroup } from '../run/runner.js';
import { KUBE_API_FLAGS } from '../kube-api-flags.js';
import { LEASE_FLAGS } from '../lease-flags.js';
import { readKeys, sourcesOf } from '../sources.js';
import { UPSTREAM_IDLE_TIMEOUT_FLAG, upstreamIdleTimeoutOf } from '../upstream-idle-flag.js';

export const DEV_FLAGS: FlagSpecs = {
  config: { ...CONFIG, description: `${CONFIG.description} (or --kubeconfig)` },
  kubeconfig: KUBECONFIG,
  'in-cluster': IN_CLUSTER,
  address: ADDRESS,
  'admin-port': ADMIN_PORT,
  'envoy-admin-port': ENVOY_ADMIN_PORT,
  'session-key-file': {
    ...SESSION_KEY_FILE,
    default: 'none: an ephemeral key, so sessions end when the command stops',
  },
  'session-key': SESSION_KEY,
  'session-key-secret': SESSION_KEY_SECRET,
  ...LEASE_FLAGS,
  ...KUBE_API_FLAGS,
  debug: {
    type: 'boolean',
    description: 'the filter adds x-steadfast-policy (the policy token) to every response',
    default: 'off',
  },
  'allow-empty': ALLOW_EMPTY,
  filter: filterFlag('auto', 'the filter Envoy runs'),
  'upstream-idle-timeout': UPSTREAM_IDLE_TIMEOUT_FLAG,
};

/** The session keys given, or one ephemeral key (with a warning) without any; `keep` leaves the source open. */
async function devSessionKeys(
  keys: KeySource,
  io: CommandIO,
  prefix: string,
  keep: boolean,
): Promise<string[]> {
  const ring = await readKeys(keys);
  if (!keep) keys.close();
  if (ring.keys.length > 0) return [...ring.keys];
  io.err(
    `${prefix}: warning: no --session-key-file; using an ephemeral session key, so sessions ` +
      'end when this process stops. Use a key file (one `openssl rand -base64 32` per line) to keep them.',
  );
  return [generateSessionKey()];
}

/** What `dev` starts: the local gateway's own options, every one decided (flags or defaults). */
export type DevSettings = Required<
  Pick<
    LocalGatewayOptions,
    'provider' | 'address' | 'adminPort' | 'envoyAdminPort' | 'sessionKeys' | 'debug' | 'filter'
  >
> &
  Pick<LocalGatewayOptions, 'followKeys' | 'upstreamIdleTimeout'>;

export async function devSettings(
  parsed: ParsedArgs,
  io: CommandIO,
  prefix: string,
  defaults: { readonly debug: boolean } = { debug: false },
): Promise<DevSettings> {
  const log = (line: string) => io.err(`${prefix}: ${line}`);
  const upstreamIdleTimeout = upstreamIdleTimeoutOf(parsed);
  const { provider, keys, configPaths } = await sourcesOf(parsed, log);
  if (!provider) throw new UsageError('give --config PATH (a Gateway API YAML file or directory)');
  // A Secret can change while dev runs: it is followed; a key file is read once.
  const secret = parsed.flags.has('session-key-secret');
  const sessionKeys = await devSessionKeys(keys, io, prefix, secret);
  if (configPaths.length > 0)
    await checkConfigPaths(configPaths, boolFlag(parsed, 'allow-empty'), io, prefix);
  return Object.freeze({
    provider,
    address: flag(parsed, 'address') ?? '127.0.0.1',
    adminPort: intFlag(parsed, 'admin-port', 9902),
    envoyAdminPort: intFlag(parsed, 'envoy-admin-port', 9901),
    sessionKeys,
    ...(secret ? { followKeys: keys } : {}),
    debug: boolFlag(parsed, 'debug', defaults.debug),
    filter: filterChoiceOf(parsed, 'filter', 'auto'),
    ...(upstreamIdleTimeout !== undefined ? { upstreamIdleTimeout } : {}),
  });
}

/** The runners of a local gateway, in order: the provider, then the gateway on it. */
export async function startDevGateway(
  group: RunGroup,
  settings: DevSettings,
  io: CommandIO,
  prefix: string,
): Promise<RunningGateway> {
  const provider = await group.start(providerRunner(settings.provider));
  return group.start(
    localGatewayRunner({ ...settings, provider, log: (line) => io.err(`${prefix}: ${line}`) }),
  );
}

export function readyLine(prefix: string, { gateway, listenerUrls }: RunningGateway): string {
  return (
    `${prefix}: ready; gateway ${listenerUrls.join(' ') || '(no HTTP listeners)'}; ` +
    `Envoy admin ${gateway.envoy.adminUrl}; control service admin ${gateway.control.adminUrl}`
  );
}

export const devCommand: Command = {
  usage: 'steadfast dev --config PATH [options]\n       steadfast dev --kubeconfig FILE [options]',
  description:
    "Runs Envoy in gateway mode on each Gateway listener's port, configured from the YAML and\n" +
    'updated without a restart when it changes, and the control service (admin API). Checks\n' +
    'every port first; prints one ready line; Ctrl-C or SIGTERM stops everything.',
  flags: DEV_FLAGS,
  positionals: 'PATH... — the same as --config PATH',
  async run(parsed, io) {
    const settings = await devSettings(parsed, io, 'steadfast dev');
    const group = new RunGroup();
    const running = await startDevGateway(group, settings, io, 'steadfast dev');
    // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
    const signalled = untilSignalled();
    io.out(readyLine('steadfast dev', running));
    await signalled;
    await group.stop();
    io.out('steadfast dev: stopped');
    return 0;
  },
};
