// The steadfast.test.v1.Echo implementation: echo back, name the instance and the attempt, and fail the
// first `succeed_after` attempts of a uuid in the shape the request asks for.
import {
  Metadata,
  status,
  type sendUnaryData,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { finishAttempt, type AttemptLedger, type AttemptRecord } from '../attempt-ledger.js';
import { failsAttempt } from '../retry-simulation.js';
import {
  checkEchoRequest,
  failCode,
  type EchoReply,
  type EchoRequest,
  type MetadataEntry,
} from './echo-request.js';

export const instanceKey = 'x-backend-instance';
export const attemptKey = 'x-backend-attempt';

export interface GrpcEchoContext {
  readonly instance: string;
  readonly ledger: AttemptLedger;
}

type EchoCall = ServerUnaryCall<EchoRequest, EchoReply> | ServerWritableStream<EchoRequest, EchoReply>;

interface Prepared {
  readonly record: AttemptRecord | null;
  readonly failing: boolean;
  readonly reply: EchoReply;
}

function requestMetadata(call: EchoCall): MetadataEntry[] {
  return Object.keys(call.metadata.toJSON()).flatMap((key) =>
    call.metadata
      .get(key)
      .map((value) => ({ key, value: typeof value === 'string' ? value : value.toString('base64') })),
  );
}

/** Metadata naming the instance (and attempt), sent in response headers and in trailers. */
function backendMetadata(context: GrpcEchoContext, record: AttemptRecord | null): Metadata {
  const metadata = new Metadata();
  metadata.set(instanceKey, context.instance);
  if (record !== null) metadata.set(attemptKey, String(record.attempt));
  return metadata;
}

function pause(call: EchoCall, ms: number): Promise<void> {
  if (ms <= 0 || call.cancelled) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    call.once('cancelled', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function invalid(message: string, context: GrpcEchoContext): ServerErrorResponse {
  return {
    name: 'InvalidArgument',
    message,
    code: status.INVALID_ARGUMENT,
    metadata: backendMetadata(context, null),
  };
}

/** Counts the attempt and waits out the requested delays; null when the client cancelled meanwhile. */
async function prepare(
  call: EchoCall,
  request: EchoRequest,
  method: string,
  context: GrpcEchoContext,
): Promise<Prepared | null> {
  const record =
    request.uuid === ''
      ? null
      : context.ledger.begin(request.uuid, { instance: context.instance, protocol: 'gRPC', method });
  if (record !== null) call.once('cancelled', () => finishAttempt(record, 'aborted', null));
  const failing = record !== null && failsAttempt(record.attempt, request.succeed_after);
  if (record !== null) record.failed = failing;
  await pause(call, request.delay_ms + (failing ? request.delay_retry_ms : 0));
  if (call.cancelled) return null;
  const reply: EchoReply = {
    message: request.message,
    instance: context.instance,
    attempt: record?.attempt ?? 0,
    metadata: requestMetadata(call),
  };
  return { record, failing, reply };
}

function failure(request: EchoRequest, prepared: Prepared, context: GrpcEchoContext): ServerErrorResponse {
  const code = failCode(request);
  if (prepared.record !== null) finishAttempt(prepared.record, 'response', code);
  return {
    name: 'SimulatedFailure',
    message: `attempt ${prepared.reply.attempt} fails on purpose (succeed_after ${request.succeed_after})`,
    code,
    metadata: backendMetadata(context, prepared.record),
  };
}

async function echo(
  call: ServerUnaryCall<EchoRequest, EchoReply>,
  callback: sendUnaryData<EchoReply>,
  context: GrpcEchoContext,
): Promise<void> {
  const problem = checkEchoRequest(call.request, false);
  if (problem !== null) return callback(invalid(problem, context));
  const prepared = await prepare(call, call.request, 'Echo', context);
  if (prepared === null) return;
  const metadata = backendMetadata(context, prepared.record);
  if (prepared.failing) {
    // Trailers-only unless headers go first: grpc-js answers trailers-only when no metadata was sent.
    if (call.request.failure_shape === 'FAILURE_SHAPE_AFTER_HEADERS') call.sendMetadata(metadata);
    return callback(failure(call.request, prepared, context));
  }
  call.sendMetadata(metadata);
  if (prepared.record !== null) finishAttempt(prepared.record, 'response', status.OK);
  callback(null, prepared.reply, backendMetadata(context, prepared.record));
}

async function echoStream(
  call: ServerWritableStream<EchoRequest, EchoReply>,
  context: GrpcEchoContext,
): Promise<void> {
  const problem = checkEchoRequest(call.request, true);
  if (problem !== null) {
    call.emit('error', invalid(problem, context));
    return;
  }
  const prepared = await prepare(call, call.request, 'EchoStream', context);
  if (prepared === null) return;
  const metadata = backendMetadata(context, prepared.record);
  if (prepared.failing) {
    const shape = call.request.failure_shape;
    if (shape !== 'FAILURE_SHAPE_TRAILERS_ONLY') call.sendMetadata(metadata);
    if (shape === 'FAILURE_SHAPE_AFTER_MESSAGE') call.write(prepared.reply);
    call.emit('error', failure(call.request, prepared, context));
    return;
  }
  call.sendMetadata(metadata);
  for (let i = 0; i < Math.max(1, call.request.repeat); i++) call.write(prepared.reply);
  if (prepared.record !== null) finishAttempt(prepared.record, 'response', status.OK);
  call.end(backendMetadata(context, prepared.record));
}

function attempts(
  call: ServerUnaryCall<{ uuid: string }, unknown>,
  callback: sendUnaryData<unknown>,
  context: GrpcEchoContext,
): void {
  const { uuid } = call.request;
  if (uuid === '' || uuid.length > 128) return callback(invalid('uuid: needs 1-128 characters', context));
  callback(null, {
    uuid,
    count: context.ledger.count(uuid),
    attempts: context.ledger.attempts(uuid).map((record) => ({
      attempt: record.attempt,
      instance: record.instance,
      method: record.method,
      arrived_at_ms: record.arrivedAtMs,
      ended_at_ms: record.endedAtMs ?? 0,
      outcome: record.outcome,
      status: record.status ?? -1,
      failed: record.failed,
    })),
  });
}

function internal(error: unknown): ServerErrorResponse {
  const message = `grpc echo backend error: ${error instanceof Error ? error.message : String(error)}`;
  return { name: 'Internal', message, code: status.INTERNAL };
}

/** Handlers are async; an unexpected failure ends the call with INTERNAL instead of leaving it hanging. */
function unaryHandler<Req, Res>(
  run: (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => Promise<void> | void,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    Promise.resolve()
      .then(() => run(call, callback))
      .catch((error: unknown) => callback(internal(error)));
  };
}

function streamHandler<Req, Res>(
  run: (call: ServerWritableStream<Req, Res>) => Promise<void>,
): (call: ServerWritableStream<Req, Res>) => void {
  return (call) => {
    run(call).catch((error: unknown) => call.emit('error', internal(error)));
  };
}

export function echoService(context: GrpcEchoContext): UntypedServiceImplementation {
  return {
    Echo: unaryHandler<EchoRequest, EchoReply>((call, callback) => echo(call, callback, context)),
    EchoStream: streamHandler<EchoRequest, EchoReply>((call) => echoStream(call, context)),
    Attempts: unaryHandler<{ uuid: string }, unknown>((call, callback) => attempts(call, callback, context)),
  };
}
