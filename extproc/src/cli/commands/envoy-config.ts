// `steadfast envoy-config --config <dir> --mode gateway|attach`: prints the Envoy
// configuration steadfast generates. Gateway mode: the whole configuration, every resource
// static. Attach mode: the snippet to add to an Envoy you already run.
import { relative } from 'node:path';
import { generateAttachSnippet } from '../../envoy/attach-snippet.js';
import { COMPOSE_HEADER, composeGatewayOptions } from '../../envoy/compose-preset.js';
import { envoyYaml } from '../../envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../envoy/gateway-config.js';
import { projectRoot } from '../../runtime/project-root.js';
import { readSessionKeyFile } from '../../runtime/session-key-file.js';
import { flag, intFlag, parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';
import { loadSnapshot } from '../load-snapshot.js';
import { formatDiagnostic, isWarning } from '../../gatewayapi/diagnostic.js';

const USAGE =
  'steadfast envoy-config --config <dir> --mode gateway|attach [--address A] [--envoy-admin-port N] ' +
  '[--wasm-path P] [--session-key BASE64]... [--session-keys FILE] [--ext-proc-address HOST:PORT] ' +
  '[--forward-all-headers] [--compose]';

export const envoyConfigCommand: Command = {
  name: 'envoy-config',
  summary: 'print the Envoy configuration for gateway mode, or the snippet for attach mode',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      config: { type: 'string', multiple: true },
      mode: { type: 'string' },
      address: { type: 'string' },
      'envoy-admin-port': { type: 'string' },
      'wasm-path': { type: 'string' },
      'session-key': { type: 'string', multiple: true },
      'session-keys': { type: 'string' },
      'ext-proc-address': { type: 'string' },
      // Attach mode: ext_proc gets every request header, not only those the rules read.
      'forward-all-headers': { type: 'boolean' },
      // The preset compose.yaml runs: listeners and admin on 0.0.0.0, the demo key, debug.
      compose: { type: 'boolean' },
    });
    const configPaths = parsed.flags.get('config') ?? [];
    if (configPaths.length === 0) throw new UsageError('--config <dir> is required');
    const mode = flag(parsed, 'mode') ?? 'gateway';
    if (mode !== 'gateway' && mode !== 'attach')
      throw new UsageError(`--mode must be gateway or attach, not ${mode}`);
    const loaded = await loadSnapshot(configPaths, io);
    if (!loaded) return 2;
    const snap = loaded.snapshot;
    // Only what is really wrong, each located; then what it means for the generated config.
    for (const d of snap.errors) {
      io.err(`steadfast envoy-config: ${isWarning(d) ? 'warning' : 'problem'}: ${formatDiagnostic(d)}`);
    }
    for (const d of snap.warnings) io.err(`steadfast envoy-config: warning: ${formatDiagnostic(d)}`);
    const rules = snap.table.routes.flatMap((r) => r.rules);
    const closed = rules.filter((r) => r.invalid);
    if (closed.length > 0) {
      io.err(
        `steadfast envoy-config: ${closed.length} rule(s) fail closed and answer 500: ` +
          `${closed.map((r) => r.id).join(', ')} (\`steadfast validate\` shows why)`,
      );
    }
    const needsKeys = rules.some((r) => !r.invalid && r.policy.session !== undefined);
    // Relative to the project root, where `envoy -c` is documented to run from.
    const wasmPath =
      flag(parsed, 'wasm-path') ?? relative(process.cwd(), `${projectRoot()}/filter/build/steadfast.wasm`);
    // Keys from --session-key and from a key file (read now: Envoy's wasm configuration is inline).
    const keyFile = flag(parsed, 'session-keys');
    const sessionKeys = [
      ...(parsed.flags.get('session-key') ?? []),
      ...(keyFile !== undefined ? (await readSessionKeyFile(keyFile)).keys : []),
    ];
    if (mode === 'attach') {
      io.out(
        generateAttachSnippet(snap.table, {
          extProcAddress: flag(parsed, 'ext-proc-address') ?? '127.0.0.1:50051',
          wasmPath,
          ...(sessionKeys.length > 0 ? { sessionKeys } : {}),
          ...(flag(parsed, 'forward-all-headers') === 'true' ? { forwardAllHeaders: true } : {}),
        }),
      );
      return 0;
    }
    for (const w of generateGatewayResources(snap.table, { wasmPath, sessionKeys }).warnings) {
      io.err(`steadfast envoy-config: warning: ${w}`);
    }
    if (flag(parsed, 'compose') === 'true') {
      io.out(
        envoyYaml(
          generateGatewayConfig(snap.table, composeGatewayOptions(sessionKeys), snap.tls),
          COMPOSE_HEADER,
        ),
      );
      return 0;
    }
    if (sessionKeys.length === 0 && needsKeys) {
      io.err(
        'steadfast envoy-config: warning: no --session-key given, but rules use session persistence: ' +
          'without a key they cannot issue tokens. Add --session-key "$(openssl rand -base64 32)".',
      );
    }
    const config = generateGatewayConfig(
      snap.table,
      {
        address: flag(parsed, 'address') ?? '127.0.0.1',
        admin: { address: '127.0.0.1', port: intFlag(parsed, 'envoy-admin-port', 9901) },
        wasmPath,
        sessionKeys,
      },
      snap.tls,
    );
    io.out(envoyYaml(config));
    return 0;
  },
};
