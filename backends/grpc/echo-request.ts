// The EchoRequest message as the loader hands it over, and its checks: a request the backend cannot
// honour is INVALID_ARGUMENT naming the field, before any attempt is counted.
import { status } from '@grpc/grpc-js';
import { maxDelayMs } from '../go-duration.js';
import { maxSucceedAfter } from '../retry-simulation.js';

export type FailureShape =
  'FAILURE_SHAPE_TRAILERS_ONLY' | 'FAILURE_SHAPE_AFTER_HEADERS' | 'FAILURE_SHAPE_AFTER_MESSAGE';

export interface EchoRequest {
  readonly message: string;
  readonly uuid: string;
  readonly succeed_after: number;
  readonly fail_code: number;
  readonly failure_shape: FailureShape;
  readonly delay_ms: number;
  readonly delay_retry_ms: number;
  readonly repeat: number;
}

export interface EchoReply {
  readonly message: string;
  readonly instance: string;
  readonly attempt: number;
  readonly metadata: readonly MetadataEntry[];
}

export interface MetadataEntry {
  readonly key: string;
  readonly value: string;
}

const shapes: readonly string[] = [
  'FAILURE_SHAPE_TRAILERS_ONLY',
  'FAILURE_SHAPE_AFTER_HEADERS',
  'FAILURE_SHAPE_AFTER_MESSAGE',
];

/** Replies a successful EchoStream may send. */
export const maxRepeat = 100;

/** The gRPC status a failing attempt ends with; 0 (unset) means UNAVAILABLE. */
export function failCode(request: EchoRequest): status {
  return request.fail_code === 0 ? status.UNAVAILABLE : (request.fail_code as status);
}

/** Returns why the request is invalid, or null. `streaming` allows failures after a message. */
export function checkEchoRequest(request: EchoRequest, streaming: boolean): string | null {
  if (request.uuid.length > 128) return 'uuid: longer than 128 characters';
  if (request.succeed_after > maxSucceedAfter)
    return `succeed_after: ${request.succeed_after} is above ${maxSucceedAfter}`;
  if (request.succeed_after > 0 && request.uuid === '') return 'succeed_after: needs uuid';
  if (request.fail_code > 16) return `fail_code: ${request.fail_code} is not a gRPC status code (1-16)`;
  if (!shapes.includes(request.failure_shape))
    return `failure_shape: unknown value ${String(request.failure_shape)}`;
  if (request.failure_shape === 'FAILURE_SHAPE_AFTER_MESSAGE' && !streaming) {
    return 'failure_shape: FAILURE_SHAPE_AFTER_MESSAGE needs EchoStream; a unary reply cannot precede an error';
  }
  if (request.delay_ms > maxDelayMs) return `delay_ms: ${request.delay_ms} is above ${maxDelayMs}`;
  if (request.delay_retry_ms > maxDelayMs)
    return `delay_retry_ms: ${request.delay_retry_ms} is above ${maxDelayMs}`;
  if (request.repeat > maxRepeat) return `repeat: ${request.repeat} is above ${maxRepeat}`;
  return null;
}
