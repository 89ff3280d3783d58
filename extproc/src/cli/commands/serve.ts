// `steadfast serve`: the control service in attach mode — ext_proc over gRPC for an
// existing Envoy, plus the admin API. Prints one ready line, drains on SIGINT/SIGTERM.
import type { PolicyLookup } from '../../grpc/ext-proc-service.js';
import { startControlService, untilSignalled } from '../../runtime/control-service.js';
import { flag, intFlag, parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';

const USAGE =
  'steadfast serve [--grpc-address HOST:PORT] [--admin-address HOST] [--admin-port N] [--policy-token TOKEN]';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the control service for an existing Envoy (ext_proc + admin API)',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      'grpc-address': { type: 'string' },
      'admin-address': { type: 'string' },
      'admin-port': { type: 'string' },
      'policy-token': { type: 'string' },
    });
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const grpcAddress = flag(parsed, 'grpc-address') ?? '127.0.0.1:50051';
    if (!/^\S+:\d{1,5}$/.test(grpcAddress))
      throw new UsageError(`--grpc-address: "${grpcAddress}" is not HOST:PORT`);
    // A fixed token for every request: checks Envoy's wiring before a configuration exists.
    const staticToken = flag(parsed, 'policy-token');
    const lookup: PolicyLookup = () => staticToken;

    const service = await startControlService({
      grpcAddress,
      adminAddress: flag(parsed, 'admin-address') ?? '127.0.0.1',
      adminPort: intFlag(parsed, 'admin-port', 9902),
      lookup,
      onError: (e) => io.err(`steadfast serve: ${e instanceof Error ? e.message : String(e)}`),
    });
    io.out(`steadfast serve: ready; ext_proc on ${service.grpcAddress}; admin on ${service.adminUrl}`);
    await untilSignalled();
    io.out('steadfast serve: draining');
    await service.stop();
    io.out('steadfast serve: stopped');
    return 0;
  },
};
