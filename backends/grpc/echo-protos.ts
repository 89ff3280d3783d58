// Loads the gRPC backend's protos (its Echo service and grpc.health.v1) with one set of loader options,
// shared by the server, reflection and test clients so all see the same field spelling.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const echoProtoFile = 'steadfast/test/v1/echo.proto';
export const healthProtoFile = 'grpc/health/v1/health.proto';
export const echoServiceName = 'steadfast.test.v1.Echo';
export const healthServiceName = 'grpc.health.v1.Health';

/** Field names as in the .proto (snake_case), enums as their names, defaults filled in. */
export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The proto directory: beside this module in the sources, or found from dist/backends/grpc after a build. */
export function protoRoot(): string {
  const candidates = ['../proto/', '../../../backends/proto/'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  const found = candidates.find((dir) => existsSync(`${dir}${echoProtoFile}`));
  if (found === undefined) throw new Error(`cannot find ${echoProtoFile} in ${candidates.join(' or ')}`);
  return found;
}

/** grpc.health.v1 is declared once, with the control service's protos in extproc/proto. */
export function healthProtoRoot(): string {
  const candidates = ['../../extproc/proto/', '../../../extproc/proto/'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  const found = candidates.find((dir) => existsSync(`${dir}${healthProtoFile}`));
  if (found === undefined) throw new Error(`cannot find ${healthProtoFile} in ${candidates.join(' or ')}`);
  return found;
}

export function loadEchoPackage(): protoLoader.PackageDefinition {
  return protoLoader.loadSync([echoProtoFile, healthProtoFile], {
    ...loaderOptions,
    includeDirs: [protoRoot(), healthProtoRoot()],
  });
}

/** A client constructor for a fully qualified service name, for tests and tools. */
export function clientConstructor(
  pkg: protoLoader.PackageDefinition,
  name: string,
): grpc.ServiceClientConstructor {
  const object = grpc.loadPackageDefinition(pkg);
  let node: unknown = object;
  for (const part of name.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  if (typeof node !== 'function') throw new Error(`${name} is not a service in the loaded protos`);
  return node as grpc.ServiceClientConstructor;
}

/** The service definition of a fully qualified service name in a loaded package. */
export function serviceDefinition(pkg: protoLoader.PackageDefinition, name: string): grpc.ServiceDefinition {
  return clientConstructor(pkg, name).service;
}
