// Starts the control service's gRPC server (ext_proc, health and server reflection, so
// `grpcurl -plaintext HOST:PORT list` and `describe` work without proto files) and stops it gracefully.
import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { decodeProcessingRequest, type ExtProcRequest } from './ext-proc-codec.js';
import { extProcHandler, type ExtProcDeps } from './ext-proc-service.js';
import { HealthState } from './health-service.js';
import { loadServiceProtos } from './protos.js';
import { reflectionPackage } from './reflection-files.js';

export interface GrpcServerHandle {
  readonly address: string;
  readonly port: number;
  readonly health: HealthState;
  /** Stops taking streams, lets open ones finish for up to `graceMs`, then cuts them. */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * ext_proc's Process method with steadfast's own codec in place of proto-loader's: requests
 * are decoded only as far as the resolver reads, answers go out as prepared bytes.
 * Reflection still describes the method from the protos.
 */
function extProcDefinition(
  generated: grpc.ServiceDefinition,
  deps: ExtProcDeps,
): grpc.ServiceDefinition<grpc.UntypedServiceImplementation> {
  const process = generated['Process'] as grpc.MethodDefinition<unknown, unknown>;
  const method: grpc.MethodDefinition<ExtProcRequest, Buffer> = {
    ...(process as unknown as grpc.MethodDefinition<ExtProcRequest, Buffer>),
    requestDeserialize: (bytes: Buffer) => decodeProcessingRequest(bytes, deps.headersRead?.()),
    responseSerialize: (answer: Buffer) => answer,
  };
  return { Process: method };
}

let reflection: ReflectionService | undefined;

/** Server reflection for the services' protos, each file naming its imports: built once, shared by every server. */
function reflectionService(): ReflectionService {
  return (reflection ??= new ReflectionService(reflectionPackage(loadServiceProtos().packages)));
}

/**
 * Loads what startGrpcServer needs before it can listen (the protos, ~90 ms of CPU, and their
 * reflection, ~10-20 ms), so that it can be done ahead, while this thread would wait anyway.
 */
export function prepareGrpcServer(): void {
  reflectionService();
}

export async function startGrpcServer(address: string, deps: ExtProcDeps): Promise<GrpcServerHandle> {
  const protos = loadServiceProtos();
  const server = new grpc.Server({
    // One stream per request: allow plenty of concurrent streams on Envoy's connection.
    'grpc.max_concurrent_streams': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    // Channelz (per-call tracking for gRPC's debugging service) is not served: do not pay for it per stream.
    'grpc.enable_channelz': 0,
  });
  const health = new HealthState();
  server.addService(extProcDefinition(protos.extProc, deps), { Process: extProcHandler(deps) });
  server.addService(protos.health, health.handlers());
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
