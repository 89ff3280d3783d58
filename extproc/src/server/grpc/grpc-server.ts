// Starts the control service's gRPC server (ext_proc, health and server reflection, so
// `grpcurl -plaintext HOST:PORT list` works without proto files) and stops it gracefully.
import * as grpc from '@grpc/grpc-js';
import { decodeProcessingRequest, type ExtProcRequest } from './ext-proc-codec.js';
import { extProcHandler, type ExtProcDeps } from './ext-proc-service.js';
import { HealthState } from './health-service.js';
import { LazyReflection } from './lazy-reflection.js';
import { EXT_PROC_SERVICE, healthService, loadServiceProtos } from './protos.js';

export interface GrpcServerHandle {
  readonly address: string;
  readonly port: number;
  readonly health: HealthState;
  /** Stops taking streams, lets open ones finish for up to `graceMs`, then cuts them. */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * ext_proc's Process method as the server takes it: its path and streaming (Envoy's
 * external_processor.proto), with steadfast's own codec in place of proto-loader's: requests
 * are decoded only as far as the resolver reads, answers go out as prepared bytes. Reflection
 * describes the method from the protos.
 */
function extProcDefinition(deps: ExtProcDeps): grpc.ServiceDefinition<grpc.UntypedServiceImplementation> {
  const method: grpc.MethodDefinition<ExtProcRequest, Buffer> = {
    path: `/${EXT_PROC_SERVICE}/Process`,
    requestStream: true,
    responseStream: true,
    requestDeserialize: (bytes: Buffer) => decodeProcessingRequest(bytes, deps.headersRead?.()),
    responseSerialize: (answer: Buffer) => answer,
    // A client's half, which a server never calls.
    requestSerialize: () => {
      throw new Error('the ext_proc server sends no requests');
    },
    responseDeserialize: (bytes: Buffer) => bytes,
  };
  return { Process: method };
}

let reflection: LazyReflection | undefined;

/** Server reflection over the services' protos, shared by every server; built on its first call. */
function reflectionService(): LazyReflection {
  return (reflection ??= new LazyReflection(() => Object.assign({}, ...loadServiceProtos().packages)));
}

/**
 * Loads what startGrpcServer needs before it can listen (the health proto, the reflection
 * services' own), so that it can be done ahead, while this thread would wait anyway.
 */
export function prepareGrpcServer(): void {
  healthService();
  reflectionService();
}

export async function startGrpcServer(address: string, deps: ExtProcDeps): Promise<GrpcServerHandle> {
  const server = new grpc.Server({
    // One stream per request: allow plenty of concurrent streams on Envoy's connection.
    'grpc.max_concurrent_streams': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    // Channelz (per-call tracking for gRPC's debugging service) is not served: do not pay for it per stream.
    'grpc.enable_channelz': 0,
  });
  const health = new HealthState();
  server.addService(extProcDefinition(deps), { Process: extProcHandler(deps) });
  server.addService(healthService(), health.handlers());
  reflectionService().addToServer(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(new Error(`cannot listen on ${address}: ${err.message}`)) : resolve(bound),
    );
  });
  const host = address.slice(0, address.lastIndexOf(':'));
  return {
    address: `${host}:${port}`,
    port,
    health,
    shutdown: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        health.set('NOT_SERVING');
        health.endWatches();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
