// One gRPC call for the conformance tables, made with the project's pinned grpcurl (verbose,
// so the response headers are printed) against the test Echo service: the status, the
// response headers and the replies, read from grpcurl's output.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { grpcurlBinary } from '../../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT } from '../../support/paths.js';

export interface GrpcCall {
  /** host:port of the gateway listener. */
  readonly address: string;
  /** A method of steadfast.test.v1.Echo, e.g. `Echo`. */
  readonly method: string;
  /** The `:authority` the call carries. */
  readonly authority: string;
  /** Request metadata. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** What one reply of the Echo service says: who answered, and the metadata it received. */
export interface EchoReplyJson {
  readonly instance: string;
  readonly metadata?: readonly { readonly key: string; readonly value: string }[];
}

export interface GrpcAnswer {
  /** grpcurl's name of the status: `OK`, `Unavailable`, … */
  readonly code: string;
  /** Response headers (lower-case names), repeated values in order. */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly replies: readonly EchoReplyJson[];
  readonly output: string;
}

/** The `Response headers received:` block of grpcurl -v, up to its blank line. */
function responseHeaders(stdout: string): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  const block = /Response headers received:\n([\s\S]*?)\n\n/.exec(stdout)?.[1] ?? '';
  for (const line of block.split('\n')) {
    const at = line.indexOf(': ');
    if (at <= 0) continue;
    const name = line.slice(0, at).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(at + 2)]);
  }
  return headers;
}

/** Each `Response contents:` block holds one reply as JSON. */
function replies(stdout: string): EchoReplyJson[] {
  return [...stdout.matchAll(/Response contents:\n(\{[\s\S]*?\n\})\n/g)].map(
    (m) => JSON.parse(m[1] as string) as EchoReplyJson,
  );
}

export function grpcExchange(call: GrpcCall): Promise<GrpcAnswer> {
  const args = [
    '-plaintext',
    '-v',
    '-max-time',
    '10',
    '-import-path',
    join(REPO_ROOT, 'backends', 'proto'),
    '-proto',
    'steadfast/test/v1/echo.proto',
    '-authority',
    call.authority,
    ...Object.entries(call.metadata ?? {}).flatMap(([k, v]) => ['-rpc-header', `${k}: ${v}`]),
    '-d',
    '{}',
    call.address,
    `steadfast.test.v1.Echo/${call.method}`,
  ];
  return new Promise((resolve) =>
    execFile(grpcurlBinary(), args, (err, stdout, stderr) => {
      const code = err ? (/Code: (\w+)/.exec(stdout + stderr)?.[1] ?? 'Failed') : 'OK';
      resolve({ code, headers: responseHeaders(stdout), replies: replies(stdout), output: stdout + stderr });
    }),
  );
}
