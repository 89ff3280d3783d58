// `steadfast dev --config <dir>`: a local gateway — Envoy on each Gateway listener's port,
// configured from the directory and reloaded when it changes, and the control service.
// Prints one ready line; SIGINT/SIGTERM stop Envoy and exit 0.
import { readFileSync } from 'node:fs';
import { untilSignalled } from '../../runtime/control-service.js';
import { type LocalGateway, startLocalGateway } from '../../runtime/local-gateway.js';
import { generateSessionKey, parseSessionKeyFile } from '../../session/keys.js';
import { type ParsedArgs, flag, intFlag, parseArgs } from '../args.js';
import { type Command, type CommandIO, UsageError } from '../command.js';
import { checkConfigPaths } from '../config-paths.js';

export const DEV_USAGE =
  'steadfast dev --config <dir> [--address A] [--admin-port N] [--envoy-admin-port N] [--session-keys FILE] [--debug]';

export const DEV_FLAGS = {
  config: { type: 'string', multiple: true },
  address: { type: 'string' },
  'admin-port': { type: 'string' },
  'envoy-admin-port': { type: 'string' },
  'session-keys': { type: 'string' },
  debug: { type: 'boolean' },
  'allow-empty': { type: 'boolean' },
} as const;

/** The session keys from --session-keys, or one ephemeral key (with a warning) without it. */
export function sessionKeysFrom(parsed: ParsedArgs, io: CommandIO, prefix: string): string[] {
  const file = flag(parsed, 'session-keys');
  if (file === undefined) {
    io.err(
      `${prefix}: warning: no --session-keys file; using an ephemeral session key, so sessions ` +
        'end when this process stops. Use a key file (one `openssl rand -base64 32` per line) to keep them.',
    );
    return [generateSessionKey()];
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--session-keys: cannot read ${file}: ${(e as Error).message}`);
  }
  return parseSessionKeyFile(text, file).map((k) => k.toString('base64'));
}

export interface DevSettings {
  readonly configPaths: readonly string[];
  readonly address: string;
  readonly adminPort: number;
  readonly envoyAdminPort: number;
  readonly sessionKeys: readonly string[];
  readonly debug: boolean;
}

export function devSettings(parsed: ParsedArgs, io: CommandIO, prefix: string): DevSettings {
  const configPaths = parsed.flags.get('config') ?? [];
  if (configPaths.length === 0) throw new UsageError('--config <dir> is required');
  return {
    configPaths,
    address: flag(parsed, 'address') ?? '127.0.0.1',
    adminPort: intFlag(parsed, 'admin-port', 9902),
    envoyAdminPort: intFlag(parsed, 'envoy-admin-port', 9901),
    sessionKeys: sessionKeysFrom(parsed, io, prefix),
    debug: flag(parsed, 'debug') === 'true',
  };
}

/** Starts the gateway and returns it with the ready line's URLs. */
export async function startDevGateway(
  settings: DevSettings,
  io: CommandIO,
  prefix: string,
): Promise<{ gateway: LocalGateway; listenerUrls: string[] }> {
  const gateway = await startLocalGateway({
    ...settings,
    log: (line) => io.err(`${prefix}: ${line}`),
  });
  const listenerUrls = [...gateway.envoy.listeners.values()].map((a) => `http://${a}`);
  return { gateway, listenerUrls };
}

export function readyLine(prefix: string, gateway: LocalGateway, listenerUrls: readonly string[]): string {
  return (
    `${prefix}: ready; gateway ${listenerUrls.join(' ') || '(no HTTP listeners)'}; ` +
    `Envoy admin ${gateway.envoy.adminUrl}; control service admin ${gateway.control.adminUrl}`
  );
}

export const devCommand: Command = {
  name: 'dev',
  summary: 'run a local gateway (Envoy + control service) from Gateway API YAML, reloading on change',
  usage: DEV_USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, DEV_FLAGS);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const settings = devSettings(parsed, io, 'steadfast dev');
    await checkConfigPaths(settings.configPaths, flag(parsed, 'allow-empty') === 'true', io, 'steadfast dev');
    const { gateway, listenerUrls } = await startDevGateway(settings, io, 'steadfast dev');
    // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
    const signalled = untilSignalled();
    io.out(readyLine('steadfast dev', gateway, listenerUrls));
    await signalled;
    await gateway.stop();
    io.out('steadfast dev: stopped');
    return 0;
  },
};
