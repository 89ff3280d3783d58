// Loads the gRPC service definitions the control service serves: Envoy's ext_proc
// (from the protos @grpc/grpc-js-xds ships under deps/, docs/architecture.md, Envoy fact 11) and health.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ownProtoDir } from '../../proto-dir.js';

const require = createRequire(import.meta.url);

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
};

function xdsDeps(): string {
  return join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
}

export const EXT_PROC_SERVICE = 'envoy.service.ext_proc.v3.ExternalProcessor';
const HEALTH_SERVICE = 'grpc.health.v1.Health';

export interface ServiceProtos {
  readonly extProc: grpc.ServiceDefinition;
  readonly health: grpc.ServiceDefinition;
  /** Every loaded package definition, for server reflection. */
  readonly packages: protoLoader.PackageDefinition[];
}

let cached: ServiceProtos | undefined;

export function loadServiceProtos(): ServiceProtos {
  if (cached) return cached;
  const deps = xdsDeps();
  const extProcDef = protoLoader.loadSync('envoy/service/ext_proc/v3/external_processor.proto', {
    ...LOADER_OPTIONS,
    includeDirs: [
      join(deps, 'envoy-api'),
      join(deps, 'xds'),
      join(deps, 'protoc-gen-validate'),
      join(deps, 'googleapis'),
    ],
  });
  const healthDef = protoLoader.loadSync('grpc/health/v1/health.proto', {
    ...LOADER_OPTIONS,
    includeDirs: [ownProtoDir()],
  });
  const service = (def: protoLoader.PackageDefinition, name: string): grpc.ServiceDefinition =>
    def[name] as unknown as grpc.ServiceDefinition;
  cached = {
    extProc: service(extProcDef, EXT_PROC_SERVICE),
    health: service(healthDef, HEALTH_SERVICE),
    packages: [extProcDef, healthDef],
  };
  return cached;
}
