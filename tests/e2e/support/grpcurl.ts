// grpcurl (the pinned one the project installs) as a test client.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { grpcurlBinary } from '../../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT } from '../../support/paths.js';

export interface GrpcurlResult {
  readonly ok: boolean;
  /** The gRPC status name grpcurl printed (`OK` on success), e.g. `Unavailable`. */
  readonly code: string;
  readonly stdout: string;
  readonly stderr: string;
}

/** Calls `method` on `address` (host:port) with the test Echo proto from backends/proto. */
export async function grpcurlEcho(
  address: string,
  method: string,
  request: object,
  extra: string[] = [],
): Promise<GrpcurlResult> {
  const args = [
    '-plaintext',
    '-max-time',
    '10',
    '-import-path',
    join(REPO_ROOT, 'backends', 'proto'),
    '-proto',
    'steadfast/test/v1/echo.proto',
    ...extra,
    '-d',
    JSON.stringify(request),
    address,
    method,
  ];
  return new Promise((resolve) =>
    execFile(grpcurlBinary(), args, (err, stdout, stderr) => {
      const code = err ? (/Code: (\w+)/.exec(stderr)?.[1] ?? 'Failed') : 'OK';
      resolve({ ok: !err, code, stdout, stderr });
    }),
  );
}
