// The gRPC backend: steadfast.test.v1.Echo, grpc.health.v1.Health and server reflection on one
// loopback port (HTTP/2 cleartext, or TLS with a key pair), so grpcurl works without proto files.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { AttemptLedger } from '../attempt-ledger.js';
import { backendName } from '../backend-name.js';
import { listenPort, loopbackAddress } from '../loopback-endpoint.js';
import type { RunningBackend } from '../running-backend.js';
import { echoServiceName, healthServiceName, loadEchoPackage, serviceDefinition } from './echo-protos.js';
import { echoService } from './echo-service.js';
import { healthService } from './health-service.js';

export interface GrpcBackendOptions {
  /** An IPv4 loopback address, 127.0.0.0/8. */
  readonly address: string;
  /** 0 (the default) picks a free port; the bound one is in the result. */
  readonly port?: number;
  /** Reported in every reply and the `x-backend-instance` metadata; defaults to `grpc-<address>`. */
  readonly name?: string;
  /** Share one ledger between backends so attempts count across them, as retries may move between hosts. */
  readonly ledger?: AttemptLedger;
  /** Serve over TLS with this PEM key pair (h2 by ALPN) instead of cleartext. */
  readonly tls?: { readonly certificate: string; readonly privateKey: string };
}

export async function startGrpcBackend(options: GrpcBackendOptions): Promise<RunningBackend> {
  const address = loopbackAddress(options.address);
  const requestedPort = listenPort(options.port ?? 0);
  const instance = backendName(options.name ?? `grpc-${address}`);
  const ledger = options.ledger ?? new AttemptLedger();

  const pkg = loadEchoPackage();
  const server = new Server();
  server.addService(serviceDefinition(pkg, echoServiceName), echoService({ instance, ledger }));
  server.addService(serviceDefinition(pkg, healthServiceName), healthService([echoServiceName]));
  new ReflectionService(pkg).addToServer(server);

  const port = await new Promise<number>((resolve, reject) => {
    const credentials = options.tls
      ? ServerCredentials.createSsl(null, [
          {
            cert_chain: Buffer.from(options.tls.certificate),
            private_key: Buffer.from(options.tls.privateKey),
          },
        ])
      : ServerCredentials.createInsecure();
    server.bindAsync(`${address}:${requestedPort}`, credentials, (error, bound) => {
      if (error !== null) reject(error);
      else resolve(bound);
    });
  });

  let closing: Promise<void> | null = null;
  return {
    name: instance,
    address,
    port,
    close(): Promise<void> {
      // Open streams (health Watch, delayed calls) are cut rather than waited for.
      closing ??= new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      });
      return closing;
    },
  };
}
