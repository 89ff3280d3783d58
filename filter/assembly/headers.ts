// Every header name the filter reads or writes, encoded once. One place knows them.
import { Utf8 } from './abi/memory';

export const H_METHOD = new Utf8(':method');
export const H_AUTHORITY = new Utf8(':authority');
export const H_PATH = new Utf8(':path');
export const H_DEBUG_POLICY = new Utf8('x-steadfast-policy');

// The router's control headers (Envoy's router filter reads and strips them).
export const H_RETRY_ON = new Utf8('x-envoy-retry-on');
export const H_RETRY_GRPC_ON = new Utf8('x-envoy-retry-grpc-on');
export const H_RETRIABLE_STATUS_CODES = new Utf8('x-envoy-retriable-status-codes');
export const H_MAX_RETRIES = new Utf8('x-envoy-max-retries');
export const H_UPSTREAM_RQ_TIMEOUT_MS = new Utf8('x-envoy-upstream-rq-timeout-ms');
export const H_UPSTREAM_RQ_PER_TRY_TIMEOUT_MS = new Utf8('x-envoy-upstream-rq-per-try-timeout-ms');
export const H_RETRIABLE_HEADER_NAMES = new Utf8('x-envoy-retriable-header-names');
export const H_HEDGE_ON_PER_TRY_TIMEOUT = new Utf8('x-envoy-hedge-on-per-try-timeout');

/** Set by Envoy's connection manager on every request; keys the VM-wide retry state. */
export const H_REQUEST_ID = new Utf8('x-request-id');
export const H_STATUS = new Utf8(':status');
export const H_COOKIE = new Utf8('cookie');
export const H_SET_COOKIE = new Utf8('set-cookie');
export const H_FORWARDED_PROTO = new Utf8('x-forwarded-proto');
/** The router's attempt counter (gateway mode's virtual hosts ask the router to set it). */
export const H_ATTEMPT_COUNT = new Utf8('x-envoy-attempt-count');
/** The host pin the stateful_session filter reads (base64 `ip:port`); internal only. */
export const H_PIN = new Utf8('x-steadfast-pin');
