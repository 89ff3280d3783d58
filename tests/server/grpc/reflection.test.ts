// The control service's gRPC server answers server reflection: grpcurl lists and describes its
// services without proto files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcurlBinary } from '../../../extproc/src/local/envoy-binary.js';
import { type GrpcServerHandle, startGrpcServer } from '../../../extproc/src/server/grpc/grpc-server.js';
import { EXT_PROC_SERVICE } from '../../../extproc/src/server/grpc/protos.js';
import { ServiceMetrics } from '../../../extproc/src/server/metrics.js';
import { run } from '../../backends/clients.js';

// The pinned grpcurl the project installs (a missing one fails the run, never skips it).
const grpcurl = grpcurlBinary();
let server: GrpcServerHandle;

beforeAll(async () => {
  server = await startGrpcServer('127.0.0.1:0', {
    metrics: new ServiceMetrics().extProc,
    lookup: () => undefined,
  });
});

afterAll(async () => {
  await server.shutdown(1000);
});

describe('server reflection', () => {
  it('lists ext_proc and health', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await run(grpcurl, ['-plaintext', server.address, 'list']);
      expect(result.stderr).toBe('');
      expect(result.stdout.trim().split('\n').sort()).toEqual([EXT_PROC_SERVICE, 'grpc.health.v1.Health']);
    }
  });

  it('describes every service it lists, and the messages of other packages they use', async () => {
    const listed = await run(grpcurl, ['-plaintext', server.address, 'list']);
    for (const service of listed.stdout.trim().split('\n')) {
      const result = await run(grpcurl, ['-plaintext', server.address, 'describe', service]);
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain(`${service} is a service:`);
    }
    const extProc = await run(grpcurl, ['-plaintext', server.address, 'describe', EXT_PROC_SERVICE]);
    expect(extProc.stdout).toContain(
      'rpc Process ( stream .envoy.service.ext_proc.v3.ProcessingRequest ) returns ( stream .envoy.service.ext_proc.v3.ProcessingResponse );',
    );
    // Types the request names from envoy.config.core.v3 and google.protobuf resolve.
    const request = 'envoy.service.ext_proc.v3.ProcessingRequest';
    const message = await run(grpcurl, ['-plaintext', server.address, 'describe', request]);
    expect(message.stderr).toBe('');
    expect(message.stdout).toContain(`${request} is a message:`);
    expect(message.stdout).toContain('.envoy.config.core.v3.Metadata metadata_context');
    expect(message.stdout).toMatch(/map<string, \.google\.protobuf\.Struct> attributes/);
    const headerMap = await run(grpcurl, [
      '-plaintext',
      server.address,
      'describe',
      'envoy.config.core.v3.HeaderMap',
    ]);
    expect(headerMap.stderr).toBe('');
    expect(headerMap.stdout).toContain('repeated .envoy.config.core.v3.HeaderValue headers');
  });

  it('describes a service from its proto', async () => {
    const result = await run(grpcurl, ['-plaintext', server.address, 'describe', 'grpc.health.v1.Health']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(
      'rpc Watch ( .grpc.health.v1.HealthCheckRequest ) returns ( stream .grpc.health.v1.HealthCheckResponse )',
    );
  });
});
