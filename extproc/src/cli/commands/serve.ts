// `steadfast serve`: the control service in attach mode — ext_proc over gRPC for an
// existing Envoy, plus the admin API. Loads and watches a configuration directory and
// resolves every request against it; prints one ready line, drains on SIGINT/SIGTERM.
// With --envoy-files DIR it also feeds a gateway-mode Envoy that runs elsewhere (docker
// compose's Envoy container): the bootstrap and every reload's resources, written into DIR.
import { rename, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { COMPOSE_DEMO_SESSION_KEY, composeGatewayOptions } from '../../envoy/compose-preset.js';
import type { PolicyLookup } from '../../grpc/ext-proc-service.js';
import { startControlService, untilSignalled } from '../../runtime/control-service.js';
import { defaultExtProcWorkers, startExtProcWorkers } from '../../runtime/ext-proc-workers.js';
import { GatewayFiles } from '../../runtime/gateway-files.js';
import { ServiceMetrics } from '../../runtime/metrics.js';
import { checkPortsFree, splitHostPort } from '../../runtime/port-check.js';
import { ServedConfig } from '../../runtime/served-config.js';
import { readSessionKeyFile } from '../../runtime/session-key-file.js';
import { flag, intFlag, parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';
import { checkConfigPaths } from '../config-paths.js';

const USAGE =
  'steadfast serve --config <dir> [--grpc-address HOST:PORT] [--admin-address HOST] [--admin-port N] ' +
  '[--workers N] [--session-keys FILE] [--envoy-files DIR]\n' +
  '       steadfast serve --policy-token TOKEN [...]   (wiring check: the same policy for every request)';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the control service for an existing Envoy (ext_proc + admin API)',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      config: { type: 'string', multiple: true },
      'grpc-address': { type: 'string' },
      'admin-address': { type: 'string' },
      'admin-port': { type: 'string' },
      workers: { type: 'string' },
      'session-keys': { type: 'string' },
      'policy-token': { type: 'string' },
      'allow-empty': { type: 'boolean' },
      'envoy-files': { type: 'string' },
    });
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const grpcAddress = flag(parsed, 'grpc-address') ?? '127.0.0.1:50051';
    if (!/^\S+:\d{1,5}$/.test(grpcAddress))
      throw new UsageError(`--grpc-address: "${grpcAddress}" is not HOST:PORT`);
    const configPaths = parsed.flags.get('config') ?? [];
    // A fixed token for every request: checks Envoy's wiring before a configuration exists.
    const staticToken = flag(parsed, 'policy-token');
    if (configPaths.length === 0 && staticToken === undefined) {
      throw new UsageError('give --config <dir> (or --policy-token TOKEN to check the wiring)');
    }
    if (configPaths.length > 0 && staticToken !== undefined) {
      throw new UsageError('--config and --policy-token exclude each other');
    }
    const envoyFiles = flag(parsed, 'envoy-files');
    if (envoyFiles !== undefined && configPaths.length === 0) {
      throw new UsageError(
        '--envoy-files needs --config: it writes the gateway configuration of those files',
      );
    }
    const workers = intFlag(parsed, 'workers', defaultExtProcWorkers(availableParallelism()), 1, 64);
    const adminAddress = flag(parsed, 'admin-address') ?? '127.0.0.1';
    const adminPort = intFlag(parsed, 'admin-port', 9902);
    const keysFile = flag(parsed, 'session-keys');
    // serve seals nothing: the keys live in the filter's configuration (docs/attach.md, or the
    // files --envoy-files writes). It checks the file so a bad ring is caught here, and names the keys by id.
    const ring = keysFile !== undefined ? await readSessionKeyFile(keysFile) : undefined;
    const keyIds = ring?.ids;

    if (configPaths.length > 0) {
      await checkConfigPaths(configPaths, flag(parsed, 'allow-empty') === 'true', io, 'steadfast serve');
    }
    const grpc = splitHostPort(grpcAddress);
    await checkPortsFree([
      ...(grpc
        ? [
            {
              ...grpc,
              what: 'the ext_proc server',
              remedy: 'stop the process that holds it (another serve?), or use --grpc-address HOST:PORT',
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

    const log = (line: string) => io.err(`steadfast serve: ${line}`);
    const metrics = new ServiceMetrics();
    const config =
      configPaths.length > 0 ? new ServedConfig({ paths: configPaths, metrics, log }) : undefined;
    await config?.start();
    if (config && envoyFiles !== undefined) await feedEnvoyFiles(envoyFiles, config, ring?.keys ?? [], log);
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
            onError: (e) => log(e instanceof Error ? e.message : String(e)),
          });
    if (workers > 1) log(`${workers} ext_proc worker processes share ${service.grpcAddress}`);
    if (keyIds) log(`session keys from ${keysFile}: ${keyIds.join(', ')} (the first seals)`);
    // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
    const signalled = untilSignalled();
    io.out(`steadfast serve: ready; ext_proc on ${service.grpcAddress}; admin on ${service.adminUrl}`);
    await signalled;
    io.out('steadfast serve: draining');
    config?.close();
    await service.stop();
    io.out('steadfast serve: stopped');
    return 0;
  },
};

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
