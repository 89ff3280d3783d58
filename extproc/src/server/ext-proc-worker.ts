// One ext_proc worker process of `steadfast serve --workers N` (node:cluster): it waits for
// the primary's first policy table, binds the shared gRPC port, and resolves requests with
// the resolver compiled from the newest table it was sent (only what changed crosses:
// worker-tables.ts).
import { startGrpcServer, type GrpcServerHandle } from './grpc/grpc-server.js';
import type { PolicyLookup } from './grpc/ext-proc-service.js';
import type { Resolver } from '../resolve/compile.js';
import {
  type FromWorker,
  type ToWorker,
  WORKER_GRPC_ADDRESS_ENV,
  isMessage,
} from './ext-proc-worker-messages.js';
import { ServiceMetrics } from './metrics.js';
import { outcomeOf } from './served-config.js';
import { ListenerReport } from './listener-report.js';
import { WorkerTableReceiver } from './worker-tables.js';

const send = (m: FromWorker): void => {
  process.send?.(m);
};

// Long on purpose: the worker's whole life — its resolver, its gRPC server and the messages
// from the primary that change them — shares a few variables.
async function main(): Promise<void> {
  const address = process.env[WORKER_GRPC_ADDRESS_ENV];
  if (!address || !process.send) {
    process.stderr.write('ext-proc-worker: run by `steadfast serve --workers N`, not directly\n');
    process.exit(2);
  }
  const metrics = new ServiceMetrics();
  let resolver: Resolver | undefined;
  const tables = new WorkerTableReceiver();
  let staticToken: string | undefined;
  let server: GrpcServerHandle | undefined;
  // Each case once per worker; the primary keeps the report /v1/status shows.
  const report = new ListenerReport((problem) => send({ type: 'steadfast:listener-problem', problem }));
  const lookup: PolicyLookup = (req) =>
    resolver ? outcomeOf(resolver, req, report) : staticToken !== undefined ? staticToken : undefined;

  const listen = async (): Promise<void> => {
    if (server) return;
    try {
      server = await startGrpcServer(address, {
        lookup,
        headersRead: () => resolver?.headersRead,
        metrics: metrics.extProc,
        onError: (e) => send({ type: 'steadfast:log', line: e instanceof Error ? e.message : String(e) }),
      });
      send({ type: 'steadfast:listening', address: server.address });
    } catch (e) {
      send({ type: 'steadfast:listen-failed', message: (e as Error).message });
      process.exit(1);
    }
  };

  process.on('message', (m: unknown) => {
    if (!isMessage<ToWorker>(m)) return;
    switch (m.type) {
      case 'steadfast:policy':
        try {
          resolver = tables.apply(m);
        } catch (e) {
          // Keeps answering with the table it has; the primary sends the new one whole.
          send({ type: 'steadfast:policy-refused', message: (e as Error).message });
          break;
        }
        report.configured(resolver);
        void listen();
        break;
      case 'steadfast:static-token':
        staticToken = m.token;
        void listen();
        break;
      case 'steadfast:metrics-request':
        void metrics.registry
          .getMetricsAsJSON()
          .then((json) => send({ type: 'steadfast:metrics', id: m.id, metrics: json }));
        break;
      case 'steadfast:stop':
        void (server?.shutdown(4000) ?? Promise.resolve()).then(() => process.exit(0));
        break;
    }
  });
  send({ type: 'steadfast:waiting' });
  // The primary going away (even by SIGKILL) takes the worker with it.
  process.on('disconnect', () => process.exit(0));
  // SIGINT from a terminal reaches the whole process group: the primary decides when to stop.
  process.on('SIGINT', () => undefined);
}

void main();
