// The control service's servers together: ext_proc + health + reflection over gRPC, and
// the admin API. Used by `steadfast serve` and by the local gateway commands.
import { buildAdminServer } from './admin/admin-server.js';
import type { PolicyLookup } from './grpc/ext-proc-service.js';
import { prepareGrpcServer, startGrpcServer } from './grpc/grpc-server.js';
import { ServiceMetrics } from './metrics.js';
import type { ConfigView } from './admin/config-view.js';

export interface ControlServiceOptions {
  readonly grpcAddress: string;
  readonly adminAddress: string;
  readonly adminPort: number;
  readonly lookup: PolicyLookup;
  /** The headers `lookup` reads; the others are not decoded (absent: all). */
  readonly headersRead?: () => ReadonlySet<string> | undefined;
  readonly notReadyReason?: () => string | null;
  readonly onError?: (error: unknown) => void;
  /** Shared with whoever else counts (the served configuration's reloads). */
  readonly metrics?: ServiceMetrics;
  /** The configuration being served, for the admin API's /v1 endpoints. */
  readonly config?: ConfigView;
  /** The ADS server's view of its Envoys, for /v1/xds. */
  readonly xds?: () => unknown;
}

export interface ControlService {
  readonly grpcAddress: string;
  readonly adminUrl: string;
  readonly metrics: ServiceMetrics;
  /** Drains ext_proc streams and closes the admin API. */
  stop(): Promise<void>;
}

/** Does ahead what startControlService would do before listening (ServedConfig's whileCompiling). */
export function prepareControlService(): void {
  prepareGrpcServer();
}

export async function startControlService(options: ControlServiceOptions): Promise<ControlService> {
  const metrics = options.metrics ?? new ServiceMetrics();
  const grpc = await startGrpcServer(options.grpcAddress, {
    lookup: options.lookup,
    ...(options.headersRead ? { headersRead: options.headersRead } : {}),
    metrics: metrics.extProc,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const admin = buildAdminServer({
    metrics,
    notReadyReason: options.notReadyReason ?? (() => null),
    ...(options.config ? { config: options.config } : {}),
    ...(options.xds ? { xds: options.xds } : {}),
  });
  let adminUrl: string;
  try {
    adminUrl = await admin.listen({ host: options.adminAddress, port: options.adminPort });
  } catch (e) {
    await grpc.shutdown(0);
    throw new Error(
      `cannot serve the admin API on ${options.adminAddress}:${options.adminPort}: ${(e as Error).message}`,
    );
  }
  return {
    grpcAddress: grpc.address,
    adminUrl,
    metrics,
    stop: async () => {
      await Promise.all([grpc.shutdown(), admin.close()]);
    },
  };
}

/** Resolves when the process receives SIGINT or SIGTERM. */
export function untilSignalled(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
