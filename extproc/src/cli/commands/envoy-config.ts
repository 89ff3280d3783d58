// `steadfast envoy-config --config <dir> --mode gateway|attach`: prints the Envoy
// configuration steadfast generates. Gateway mode: the whole configuration, every resource
// static. Attach mode: the snippet to add to an Envoy you already run.
import { relative } from 'node:path';
import { generateAttachSnippet } from '../../envoy/attach-snippet.js';
import { COMPOSE_HEADER, composeGatewayOptions } from '../../envoy/compose-preset.js';
import { envoyYaml } from '../../envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../envoy/gateway-config.js';
import { envoyVersion } from '../../local/envoy-binary.js';
import { chooseFilterBuild, nativeTargetEnvoy, wasmFilterPath } from '../../local/filter-build.js';
import { type FlagSpecs, type ParsedArgs, boolFlag, flag, intFlag } from '../args.js';
import { type Command, type CommandIO, UsageError } from '../command.js';
import { loadSnapshot } from '../load-snapshot.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import { formatDiagnostic, isWarning } from '../../gatewayapi/diagnostic.js';
import {
  ADDRESS,
  CONFIG,
  ENVOY_ADMIN_PORT,
  EXT_PROC_ADDRESS_DEFAULT,
  SESSION_KEY,
  SESSION_KEY_FILE,
  filterChoiceOf,
  filterFlag,
  requireConfigPaths,
} from '../flags.js';
import { readKeys, sourcesOf } from '../sources.js';
import { UPSTREAM_IDLE_TIMEOUT_FLAG, upstreamIdleTimeoutOf } from '../upstream-idle-flag.js';
import { ENVOY_CONFIG_XDS_FLAGS, printXdsBootstrap } from './envoy-config-xds.js';

const ENVOY_CONFIG_FLAGS: FlagSpecs = {
  config: { ...CONFIG, description: `${CONFIG.description} (required)` },
  mode: {
    type: 'string',
    value: 'gateway|attach',
    description:
      'gateway: a whole Envoy configuration; attach: the snippet to add to your Envoy (docs/attach.md)',
    default: 'gateway',
  },
  address: { ...ADDRESS, description: `${ADDRESS.description} (gateway mode)` },
  'envoy-admin-port': { ...ENVOY_ADMIN_PORT, description: "Envoy's admin port, on 127.0.0.1 (gateway mode)" },
  filter: filterFlag('auto in gateway mode, wasm in attach mode', 'the filter build the configuration loads'),
  'wasm-path': {
    type: 'string',
    value: 'PATH',
    description:
      'where Envoy finds the filter: steadfast.wasm, or libsteadfast.so for the native build (both built by `npm run build` into filter/build/); given, it decides over --filter',
    default: 'the build --filter picks in filter/build/, relative to the current directory',
  },
  'session-key-file': {
    ...SESSION_KEY_FILE,
    description: `${SESSION_KEY_FILE.description}; written into the filter's configuration`,
  },
  'session-key': SESSION_KEY,
  'ext-proc-address': {
    type: 'string',
    value: 'HOST:PORT',
    description: 'where Envoy reaches `steadfast serve` (its --ext-proc-address) (attach mode)',
    default: EXT_PROC_ADDRESS_DEFAULT,
  },
  debug: {
    type: 'boolean',
    description:
      'the filter adds x-steadfast-policy (the policy token it applied) to every response; not for production',
    default: 'off',
  },
  // Attach mode: ext_proc gets every request header, not only those the rules read.
  'forward-all-headers': {
    type: 'boolean',
    description: 'attach mode: Envoy sends ext_proc every request header, not only those the rules match on',
  },
  // Attach mode: a request whose answer the Envoy worker has cached skips ext_proc.
  'answer-cache': {
    type: 'string',
    value: 'on|off',
    description:
      'attach mode: reuse ext_proc answers for the requests they hold for, so those skip ext_proc (docs/attach.md)',
    default: 'on',
  },
  'upstream-idle-timeout': {
    ...UPSTREAM_IDLE_TIMEOUT_FLAG,
    description: `${UPSTREAM_IDLE_TIMEOUT_FLAG.description}; attach mode prints it for your own clusters`,
  },
  ...ENVOY_CONFIG_XDS_FLAGS,
  // The preset compose.yaml runs: listeners and admin on 0.0.0.0, the demo key, debug.
  compose: {
    type: 'boolean',
    description:
      'the configuration compose.yaml runs (listeners and admin on 0.0.0.0, the published demo key)',
    default: 'off',
  },
};

/**
 * The filter build the printed configuration loads, relative to the project root where `envoy
 * -c` is documented to run from: --wasm-path as given, else the build --filter picks (gateway
 * mode: native where it was built for this checkout's Envoy; attach mode: the wasm, as an
 * operator's Envoy may be any version).
 */
function printedFilterPath(parsed: ParsedArgs, mode: 'gateway' | 'attach', io: CommandIO): string {
  const given = flag(parsed, 'wasm-path');
  if (given !== undefined) return given;
  const choice = filterChoiceOf(parsed, 'filter', mode === 'attach' ? 'wasm' : 'auto');
  let version: string | undefined;
  if (choice === 'auto') {
    try {
      version = envoyVersion();
    } catch {
      // No Envoy here to check the native module against: the wasm runs on any.
      return relative(process.cwd(), wasmFilterPath());
    }
  }
  let build;
  try {
    build = chooseFilterBuild(choice, version);
  } catch (e) {
    throw new UsageError(`--filter ${choice}: ${(e as Error).message}`);
  }
  if (build.kind === 'native' && choice === 'native') {
    io.err(`steadfast envoy-config: the native filter loads only into Envoy ${nativeTargetEnvoy() ?? '?'}`);
  }
  return relative(process.cwd(), build.path);
}

export const envoyConfigCommand: Command = {
  usage: 'steadfast envoy-config --config PATH [--mode gateway|attach] [options]',
  description:
    'Prints YAML on stdout. Gateway mode: the complete Envoy configuration, every resource static,\n' +
    'ready for `envoy -c` (run it from the repository root, or give --wasm-path). Attach mode: the\n' +
    'snippet docs/attach.md walks through, with comments that say where each part goes.\n' +
    'Problems in the configuration are printed on stderr, each with its file and line.',
  flags: ENVOY_CONFIG_FLAGS,
  positionals: 'PATH... — the same as --config PATH',
  async run(parsed, io) {
    const xds = flag(parsed, 'xds');
    if (xds !== undefined) {
      if (parsed.flags.has('upstream-idle-timeout'))
        throw new UsageError(
          '--upstream-idle-timeout with --xds: the bootstrap holds no backend cluster; give it to `serve --xds`, which makes them',
        );
      return printXdsBootstrap(parsed, xds, io);
    }
    const configPaths = requireConfigPaths(parsed);
    const mode = flag(parsed, 'mode') ?? 'gateway';
    if (mode !== 'gateway' && mode !== 'attach')
      throw new UsageError(`--mode must be gateway or attach, not ${mode}`);
    const debug = boolFlag(parsed, 'debug');
    const answerCache = flag(parsed, 'answer-cache') ?? 'on';
    if (answerCache !== 'on' && answerCache !== 'off')
      throw new UsageError(`--answer-cache must be on or off, not ${answerCache}`);
    const upstreamIdleTimeout = upstreamIdleTimeoutOf(parsed);
    const idle = upstreamIdleTimeout !== undefined ? { upstreamIdleTimeout } : {};
    const loaded = await loadSnapshot(configPaths, io);
    if (!loaded) return 2;
    const snap = loaded.snapshot;
    reportProblems(snap, io);
    // Relative to the project root, where `envoy -c` is documented to run from.
    const wasmPath = printedFilterPath(parsed, mode, io);
    // Keys read now: Envoy's wasm configuration is inline.
    const sessionKeys = [...(await readKeys((await sourcesOf(parsed, (line) => io.err(line))).keys)).keys];
    if (mode === 'attach') {
      io.out(
        generateAttachSnippet(snap.ir, {
          extProcAddress: flag(parsed, 'ext-proc-address') ?? EXT_PROC_ADDRESS_DEFAULT,
          wasmPath,
          ...(debug ? { debug } : {}),
          ...(sessionKeys.length > 0 ? { sessionKeys } : {}),
          ...(boolFlag(parsed, 'forward-all-headers') ? { forwardAllHeaders: true } : {}),
          ...(answerCache === 'off' ? { answerCache: false } : {}),
          ...idle,
        }),
      );
      return 0;
    }
    printGatewayConfig(parsed, snap, { wasmPath, sessionKeys, debug, ...idle }, io);
    return 0;
  },
};

/** Only what is really wrong, each located; then what it means for the generated config. */
function reportProblems(snap: Snapshot, io: CommandIO): void {
  for (const d of snap.errors) {
    io.err(`steadfast envoy-config: ${isWarning(d) ? 'warning' : 'problem'}: ${formatDiagnostic(d)}`);
  }
  for (const d of snap.warnings) io.err(`steadfast envoy-config: warning: ${formatDiagnostic(d)}`);
  const closed = snap.table.routes.flatMap((r) => r.rules).filter((r) => r.invalid);
  if (closed.length > 0) {
    io.err(
      `steadfast envoy-config: ${closed.length} rule(s) fail closed and answer 500: ` +
        `${closed.map((r) => r.id).join(', ')} (\`steadfast validate\` shows why)`,
    );
  }
}

/** Gateway mode: the whole configuration, or docker compose's (--compose). */
function printGatewayConfig(
  parsed: ParsedArgs,
  snap: Snapshot,
  filter: {
    readonly wasmPath: string;
    readonly sessionKeys: readonly string[];
    readonly debug: boolean;
    readonly upstreamIdleTimeout?: string;
  },
  io: CommandIO,
): void {
  const { wasmPath, sessionKeys, debug, upstreamIdleTimeout } = filter;
  const idle = upstreamIdleTimeout !== undefined ? { upstreamIdleTimeout } : {};
  for (const w of generateGatewayResources(snap.ir, { wasmPath, sessionKeys }).warnings) {
    io.err(`steadfast envoy-config: warning: ${w}`);
  }
  if (boolFlag(parsed, 'compose')) {
    io.out(
      envoyYaml(
        generateGatewayConfig(snap.ir, { ...composeGatewayOptions(sessionKeys), ...idle }, snap.tls),
        COMPOSE_HEADER,
      ),
    );
    return;
  }
  const needsKeys = snap.table.routes.some((r) =>
    r.rules.some((rule) => !rule.invalid && rule.policy.session),
  );
  if (sessionKeys.length === 0 && needsKeys) {
    io.err(
      'steadfast envoy-config: warning: no --session-key-file or --session-key given, but rules use ' +
        'session persistence: without a key they cannot issue tokens. Add --session-key "$(openssl rand -base64 32)".',
    );
  }
  const config = generateGatewayConfig(
    snap.ir,
    {
      address: flag(parsed, 'address') ?? '127.0.0.1',
      admin: { address: '127.0.0.1', port: intFlag(parsed, 'envoy-admin-port', 9901) },
      wasmPath,
      sessionKeys,
      ...(debug ? { debug } : {}),
      ...idle,
      // A second Envoy started on the same ports fails to bind instead of sharing them.
      exclusiveListeners: true,
    },
    snap.tls,
  );
  io.out(envoyYaml(config));
}
