import { grpcurlBinary } from '../../extproc/src/local/envoy-binary.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import {
  clientConstructor,
  echoServiceName,
  healthServiceName,
  loadEchoPackage,
} from '../../backends/grpc/echo-protos.js';
import { startGrpcBackend } from '../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { run } from './clients.js';
import { waitUntil } from '../support/wait-until.js';

type Callback<T> = (error: ServiceError | null, value?: T) => void;
interface UnaryCall {
  on(event: 'metadata', listener: (metadata: Metadata) => void): void;
}
type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline?: number },
  callback: Callback<Res>,
) => UnaryCall;
interface StreamCall {
  on(event: 'metadata', listener: (metadata: Metadata) => void): void;
  on(event: 'data', listener: (reply: EchoReply) => void): void;
  on(event: 'error', listener: (error: ServiceError) => void): void;
  on(event: 'end', listener: () => void): void;
}

interface EchoReply {
  message: string;
  instance: string;
  attempt: number;
  metadata: { key: string; value: string }[];
}
interface AttemptsReply {
  uuid: string;
  count: number;
  attempts: {
    attempt: number;
    failed: boolean;
    outcome: string;
    status: number;
    arrived_at_ms: number;
    ended_at_ms: number;
  }[];
}
type EchoClient = Client & {
  Echo: Unary<Record<string, unknown>, EchoReply>;
  EchoStream: (request: Record<string, unknown>) => StreamCall;
  Attempts: Unary<{ uuid: string }, AttemptsReply>;
};
type HealthClient = Client & { Check: Unary<{ service: string }, { status: string }> };

// The pinned grpcurl the project installs (a missing one fails the run, never skips it).
const grpcurl = grpcurlBinary();
let backend: RunningBackend;
let target: string;
let echo: EchoClient;
let health: HealthClient;
let uuidCounter = 0;
const uuid = (): string => `grpc-test-${process.pid}-${++uuidCounter}`;

beforeAll(async () => {
  backend = await startGrpcBackend({ address: '127.0.0.2', port: 0, name: 'g1' });
  target = `127.0.0.2:${backend.port}`;
  const pkg = loadEchoPackage();
  echo = new (clientConstructor(pkg, echoServiceName))(
    target,
    credentials.createInsecure(),
  ) as unknown as EchoClient;
  health = new (clientConstructor(pkg, healthServiceName))(
    target,
    credentials.createInsecure(),
  ) as unknown as HealthClient;
});

afterAll(async () => {
  echo.close();
  health.close();
  await backend.close();
});

interface UnaryOutcome<T> {
  readonly error: ServiceError | null;
  readonly reply: T | undefined;
  /** Response headers, when the server sent any before the status. */
  readonly headers: Metadata | null;
}

function unary<Req, Res>(
  method: Unary<Req, Res>,
  request: Req,
  deadlineMs?: number,
): Promise<UnaryOutcome<Res>> {
  return new Promise((resolve) => {
    let headers: Metadata | null = null;
    const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
    const call = method(request, new Metadata(), options, (error, reply) =>
      resolve({ error, reply, headers }),
    );
    call.on('metadata', (metadata) => {
      headers = metadata;
    });
  });
}

interface StreamOutcome {
  readonly events: string[];
  readonly replies: EchoReply[];
  readonly error: ServiceError | null;
}

function stream(request: Record<string, unknown>): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const events: string[] = [];
    const replies: EchoReply[] = [];
    const call = echo.EchoStream(request);
    call.on('metadata', () => events.push('headers'));
    call.on('data', (reply) => {
      events.push('message');
      replies.push(reply);
    });
    call.on('error', (error) => {
      events.push(`status ${error.code}`);
      // grpc-js may still emit 'end' after an error; the outcome is what came up to the status.
      resolve({ events: [...events], replies, error });
    });
    call.on('end', () => {
      events.push('end');
      resolve({ events, replies, error: null });
    });
  });
}

const echoUnary = (request: Record<string, unknown>, deadlineMs?: number): Promise<UnaryOutcome<EchoReply>> =>
  unary(echo.Echo.bind(echo), request, deadlineMs);

describe('grpc backend: Echo', () => {
  it('echoes the message and names the instance, in the reply and in metadata', async () => {
    const id = uuid();
    const { error, reply, headers } = await echoUnary({ message: 'hello', uuid: id });
    expect(error).toBeNull();
    expect(reply).toMatchObject({ message: 'hello', instance: 'g1', attempt: 1 });
    expect(reply?.metadata.some((entry) => entry.key === 'user-agent')).toBe(true);
    expect(headers?.get('x-backend-instance')).toEqual(['g1']);
  });

  it('attempt is 0 without a uuid', async () => {
    const { reply } = await echoUnary({ message: 'no uuid' });
    expect(reply?.attempt).toBe(0);
  });

  it('fails the first succeed_after attempts with fail_code, then succeeds', async () => {
    const id = uuid();
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { error } = await echoUnary({ uuid: id, succeed_after: 2, fail_code: status.RESOURCE_EXHAUSTED });
      codes.push(error?.code ?? status.OK);
    }
    expect(codes).toEqual([status.RESOURCE_EXHAUSTED, status.RESOURCE_EXHAUSTED, status.OK, status.OK]);
  });

  it('fail_code defaults to UNAVAILABLE', async () => {
    const { error } = await echoUnary({ uuid: uuid(), succeed_after: 1 });
    expect(error?.code).toBe(status.UNAVAILABLE);
  });

  it('a trailers-only failure sends no response headers before the status', async () => {
    const { error, headers } = await echoUnary({
      uuid: uuid(),
      succeed_after: 1,
      fail_code: status.INTERNAL,
    });
    expect(error?.code).toBe(status.INTERNAL);
    expect(headers).toBeNull();
    expect(error?.metadata.get('x-backend-instance')).toEqual(['g1']);
    expect(error?.metadata.get('x-backend-attempt')).toEqual(['1']);
  });

  it('an after-headers failure sends response headers, then the status in trailers', async () => {
    const { error, headers } = await echoUnary({
      uuid: uuid(),
      succeed_after: 1,
      fail_code: status.INTERNAL,
      failure_shape: 'FAILURE_SHAPE_AFTER_HEADERS',
    });
    expect(error?.code).toBe(status.INTERNAL);
    expect(headers?.get('x-backend-instance')).toEqual(['g1']);
  });

  it.each([
    [{ failure_shape: 'FAILURE_SHAPE_AFTER_MESSAGE' }, 'needs EchoStream'],
    [{ succeed_after: 1 }, 'succeed_after: needs uuid'],
    [{ uuid: 'u', succeed_after: 1, fail_code: 17 }, 'fail_code'],
    [{ delay_ms: 200_000 }, 'delay_ms'],
  ])('rejects %o with INVALID_ARGUMENT', async (request, message) => {
    const { error } = await echoUnary(request);
    expect(error?.code).toBe(status.INVALID_ARGUMENT);
    expect(error?.details).toContain(message);
  });
});

describe('grpc backend: EchoStream failure shapes', () => {
  it('succeeds with `repeat` replies', async () => {
    const outcome = await stream({ message: 'm', repeat: 3 });
    expect(outcome.events).toEqual(['headers', 'message', 'message', 'message', 'end']);
  });

  it('trailers-only: nothing before the status', async () => {
    const outcome = await stream({ uuid: uuid(), succeed_after: 1 });
    expect(outcome.events).toEqual([`status ${status.UNAVAILABLE}`]);
  });

  it('after-headers: headers, then the status', async () => {
    const outcome = await stream({
      uuid: uuid(),
      succeed_after: 1,
      failure_shape: 'FAILURE_SHAPE_AFTER_HEADERS',
    });
    expect(outcome.events).toEqual(['headers', `status ${status.UNAVAILABLE}`]);
  });

  it('after-message: headers and one reply, then the status', async () => {
    const id = uuid();
    const outcome = await stream({
      message: 'partial',
      uuid: id,
      succeed_after: 1,
      fail_code: status.ABORTED,
      failure_shape: 'FAILURE_SHAPE_AFTER_MESSAGE',
    });
    expect(outcome.events).toEqual(['headers', 'message', `status ${status.ABORTED}`]);
    expect(outcome.replies[0]).toMatchObject({ message: 'partial', instance: 'g1', attempt: 1 });
  });
});

describe('grpc backend: delays and attempts', () => {
  it('delay_retry_ms slows failing attempts only; Attempts reports the timings', async () => {
    const id = uuid();
    const started = performance.now();
    expect((await echoUnary({ uuid: id, succeed_after: 1, delay_retry_ms: 120 })).error?.code).toBe(
      status.UNAVAILABLE,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(118);
    expect((await echoUnary({ uuid: id, succeed_after: 1, delay_retry_ms: 120 })).error).toBeNull();

    const { reply } = await unary(echo.Attempts.bind(echo), { uuid: id });
    expect(reply?.count).toBe(2);
    expect(reply?.attempts.map((a) => [a.attempt, a.failed, a.outcome, a.status])).toEqual([
      [1, true, 'response', status.UNAVAILABLE],
      [2, false, 'response', status.OK],
    ]);
    const first = reply?.attempts[0];
    expect((first?.ended_at_ms ?? 0) - (first?.arrived_at_ms ?? 0)).toBeGreaterThanOrEqual(118);
    // Timed by the backend (arrival to answer), not around the client: the succeeding attempt
    // is answered with no timer in between, so far within the 120 ms it skips.
    const second = reply?.attempts[1];
    expect((second?.ended_at_ms ?? Infinity) - (second?.arrived_at_ms ?? 0)).toBeLessThan(120);
  });

  it('a deadline shorter than delay_ms leaves an aborted attempt', async () => {
    const id = uuid();
    // A delay far past the deadline: client and backend share this process's event loop, and a
    // stall under load must not let the delay run out before the cancellation is seen (it ends
    // early on the cancellation, so the test takes no longer).
    const { error } = await echoUnary({ uuid: id, delay_ms: 2000 }, 100);
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    // The client's deadline reaches the backend as a cancellation a moment later: wait for it.
    const outcomes = async () =>
      (await unary(echo.Attempts.bind(echo), { uuid: id })).reply?.attempts.map((a) => [a.outcome, a.status]);
    await waitUntil(
      'the attempt ended at the backend',
      async () => (await outcomes())?.[0]?.[0] !== 'pending',
    );
    expect(await outcomes()).toEqual([['aborted', -1]]);
  });
});

describe('grpc backend: health and reflection', () => {
  it.each([[''], [echoServiceName]])('Check(%j) is SERVING', async (service) => {
    const { error, reply } = await unary(health.Check.bind(health), { service });
    expect(error).toBeNull();
    expect(reply?.status).toBe('SERVING');
  });

  it('Check of an unknown service is NOT_FOUND', async () => {
    const { error } = await unary(health.Check.bind(health), { service: 'no.such.Service' });
    expect(error?.code).toBe(status.NOT_FOUND);
  });

  it('grpcurl lists the services through reflection', async () => {
    const result = await run(grpcurl, ['-plaintext', target, 'list']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')).toEqual(expect.arrayContaining([echoServiceName, healthServiceName]));
  });

  it('grpcurl calls Echo through reflection, without proto files', async () => {
    const id = uuid();
    const request = JSON.stringify({ message: 'via grpcurl', uuid: id });
    const result = await run(grpcurl, ['-plaintext', '-d', request, target, `${echoServiceName}/Echo`]);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ message: 'via grpcurl', instance: 'g1', attempt: 1 });
  });

  it('grpcurl shows a trailers-only failure as an error status', async () => {
    const request = JSON.stringify({ uuid: uuid(), succeed_after: 1, fail_code: status.UNAVAILABLE });
    const result = await run(grpcurl, ['-plaintext', '-d', request, target, `${echoServiceName}/Echo`]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('Code: Unavailable');
  });
});
