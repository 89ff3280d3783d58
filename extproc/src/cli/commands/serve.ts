// `steadfast serve`: the control service in attach mode — ext_proc over gRPC for an
// existing Envoy, plus the admin API. Prints one ready line, drains on SIGINT/SIGTERM.
import { buildAdminServer } from '../../admin/admin-server.js';
import { startGrpcServer } from '../../grpc/grpc-server.js';
import type { PolicyLookup } from '../../grpc/ext-proc-service.js';
import { ServiceMetrics } from '../../runtime/metrics.js';
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
    if (!/^[^\s]+:\d{1,5}$/.test(grpcAddress))
      throw new UsageError(`--grpc-address: "${grpcAddress}" is not HOST:PORT`);
    const adminAddress = flag(parsed, 'admin-address') ?? '127.0.0.1';
    const adminPort = intFlag(parsed, 'admin-port', 9902);
    // A fixed token for every request: wiring checks before a configuration exists.
    const staticToken = flag(parsed, 'policy-token');
    const lookup: PolicyLookup = () => staticToken;

    const metrics = new ServiceMetrics();
    const grpc = await startGrpcServer(grpcAddress, {
      lookup,
      metrics,
      onError: (e) => io.err(`steadfast serve: ${e instanceof Error ? e.message : String(e)}`),
    });
    const admin = buildAdminServer({ metrics, notReadyReason: () => null });
    const adminUrl = await admin.listen({ host: adminAddress, port: adminPort });
    io.out(`steadfast serve: ready; ext_proc on ${grpc.address}; admin on ${adminUrl}`);

    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    io.out('steadfast serve: draining');
    await Promise.all([grpc.shutdown(), admin.close()]);
    io.out('steadfast serve: stopped');
    return 0;
  },
};
