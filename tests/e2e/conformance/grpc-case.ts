// A gRPC row of a ported table (upstream's GRPCRoute tests): a call of the test Echo service
// through the gateway, with grpcurl (grpc-exchange.ts), and what must come of it — the
// backend that answered, the metadata it received and the response headers the client got;
// over many calls, how they spread over the backends; or the status a failed call ends with.
import { expect } from 'vitest';
import { type GrpcAnswer, grpcExchange } from './grpc-exchange.js';

export interface GrpcRequest {
  /** A method of steadfast.test.v1.Echo: `Echo`, or `EchoStream` where upstream calls `EchoTwo`. */
  readonly method: 'Echo' | 'EchoStream';
  /** The `:authority`: each ported GRPCRoute has a hostname of its own. */
  readonly authority: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export interface GrpcAnswerExpectation {
  /** The backend that must answer (the reply's `instance`); any, when not given. */
  readonly backend?: string;
  /** Metadata the backend must have received (lower-case names; a list of values joined with ","). */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly absentMetadata?: readonly string[];
  /** Response headers the client must receive (lower-case names; a list of values joined with ","). */
  readonly responseHeaders?: Readonly<Record<string, string>>;
  readonly absentResponseHeaders?: readonly string[];
}

/** The call made `count` times: every one OK, each backend's share within `tolerance` of its own. */
export interface GrpcWeightsExpectation {
  readonly count: number;
  /** Each backend's share (0-1); one not named must answer none. */
  readonly shares: Readonly<Record<string, number>>;
  readonly tolerance: number;
}

export interface GrpcCase {
  readonly grpc: GrpcRequest;
  readonly answered?: GrpcAnswerExpectation;
  readonly weighted?: GrpcWeightsExpectation;
  /** The call must fail (any status but OK): the gateway could not reach the backend. */
  readonly failed?: true;
  /** The call must fail with this status, as grpcurl names it (e.g. `Unimplemented`: no route). */
  readonly failedWith?: string;
}

/** Calls made at once by a weighted case (upstream sends 10 at a time too). */
const CONCURRENT_CALLS = 10;

/** Repeated values and one comma-separated value are the same list: joined with ",", no spaces. */
function joined(values: readonly string[] | undefined): string | undefined {
  return values
    ?.flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .join(',');
}

function checkAnswer(answer: GrpcAnswer, expected: GrpcAnswerExpectation): void {
  expect(answer.code, answer.output).toBe('OK');
  const reply = answer.replies[0];
  expect(reply, answer.output).toBeDefined();
  if (expected.backend !== undefined) expect(reply?.instance, answer.output).toBe(expected.backend);
  const received = new Map<string, string[]>();
  for (const { key, value } of reply?.metadata ?? [])
    received.set(key, [...(received.get(key) ?? []), value]);
  for (const [name, value] of Object.entries(expected.metadata ?? {})) {
    expect(joined(received.get(name)), `metadata ${name}`).toBe(value);
  }
  for (const name of expected.absentMetadata ?? [])
    expect(received.get(name), `metadata ${name}`).toBeUndefined();
  for (const [name, value] of Object.entries(expected.responseHeaders ?? {})) {
    expect(joined(answer.headers.get(name)), `response header ${name}`).toBe(value);
  }
  for (const name of expected.absentResponseHeaders ?? []) {
    expect(answer.headers.get(name), `response header ${name}`).toBeUndefined();
  }
}

async function checkWeights(address: string, c: GrpcCase, expected: GrpcWeightsExpectation): Promise<void> {
  const counts = new Map<string, number>();
  const worker = async (calls: number): Promise<void> => {
    for (let i = 0; i < calls; i++) {
      const answer = await grpcExchange({ address, ...c.grpc });
      expect(answer.code, answer.output).toBe('OK');
      const who = answer.replies[0]?.instance ?? 'none';
      counts.set(who, (counts.get(who) ?? 0) + 1);
    }
  };
  await Promise.all(
    Array.from({ length: CONCURRENT_CALLS }, () => worker(expected.count / CONCURRENT_CALLS)),
  );
  for (const who of counts.keys()) expect(Object.keys(expected.shares), `answered by ${who}`).toContain(who);
  for (const [backend, share] of Object.entries(expected.shares)) {
    const got = (counts.get(backend) ?? 0) / expected.count;
    if (share === 0) expect(got, backend).toBe(0);
    else
      expect(Math.abs(got - share), `${backend}: ${got} of the calls, ${share} expected`).toBeLessThanOrEqual(
        expected.tolerance,
      );
  }
}

/** A gRPC case against the listener at `address` (host:port). */
export async function checkGrpc(address: string, c: GrpcCase): Promise<void> {
  if (c.answered) checkAnswer(await grpcExchange({ address, ...c.grpc }), c.answered);
  if (c.weighted) await checkWeights(address, c, c.weighted);
  if (c.failed) {
    const answer = await grpcExchange({ address, ...c.grpc });
    expect(answer.code, answer.output).not.toBe('OK');
  }
  if (c.failedWith !== undefined) {
    const answer = await grpcExchange({ address, ...c.grpc });
    expect(answer.code, answer.output).toBe(c.failedWith);
  }
}
