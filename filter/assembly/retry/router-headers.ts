// Turns a policy into the Envoy router's retry and timeout headers (DESIGN.md,
// "Retries"). Envoy does the retrying; these headers tell it exactly what to retry.
import { HeaderMapType } from '../abi/enums';
import { getHeader, removeHeader, setHeader } from '../abi/host';
import { Utf8 } from '../abi/memory';
import {
  H_HEDGE_ON_PER_TRY_TIMEOUT,
  H_MAX_RETRIES,
  H_METHOD,
  H_RETRIABLE_HEADER_NAMES,
  H_RETRIABLE_STATUS_CODES,
  H_RETRY_GRPC_ON,
  H_RETRY_ON,
  H_UPSTREAM_RQ_PER_TRY_TIMEOUT_MS,
  H_UPSTREAM_RQ_TIMEOUT_MS,
} from '../headers';
import { Policy } from '../policy/token';

/** Every router control header a client could use to steer retries or timeouts. */
const CLIENT_CONTROL_HEADERS: Utf8[] = [
  H_RETRY_ON,
  H_RETRY_GRPC_ON,
  H_RETRIABLE_STATUS_CODES,
  H_MAX_RETRIES,
  H_UPSTREAM_RQ_TIMEOUT_MS,
  H_UPSTREAM_RQ_PER_TRY_TIMEOUT_MS,
  H_RETRIABLE_HEADER_NAMES,
  H_HEDGE_ON_PER_TRY_TIMEOUT,
];

// Connection-level failures are always retried when a retry stanza exists.
const RETRY_ON_CONNECTION = 'connect-failure,refused-stream,reset-before-request';
// Idempotent methods also retry a reset after the request was sent and a per-try
// timeout: Envoy retries a per-try timeout only under `reset`, `5xx` or `gateway-error`.
const RETRY_ON_IDEMPOTENT = 'connect-failure,refused-stream,reset-before-request,reset';
const RETRIABLE_STATUS_CODES = ',retriable-status-codes';

/** GET, HEAD, OPTIONS, TRACE, PUT and DELETE: safe to send twice. */
export function isIdempotent(method: string): bool {
  return (
    method == 'GET' ||
    method == 'HEAD' ||
    method == 'OPTIONS' ||
    method == 'TRACE' ||
    method == 'PUT' ||
    method == 'DELETE'
  );
}

/** Removes every client-sent router control header (absent ones cost one host call each). */
export function stripClientControlHeaders(): void {
  for (let i = 0; i < CLIENT_CONTROL_HEADERS.length; i++) {
    removeHeader(HeaderMapType.RequestHeaders, unchecked(CLIENT_CONTROL_HEADERS[i]));
  }
}

/** The `x-envoy-retry-on` value for a policy and method. */
export function retryOn(policy: Policy, method: string): string {
  const base = isIdempotent(method) ? RETRY_ON_IDEMPOTENT : RETRY_ON_CONNECTION;
  return policy.codes.length > 0 ? base + RETRIABLE_STATUS_CODES : base;
}

/**
 * The per-try timeout Envoy is given. Envoy starts a retry's per-try clock when it has a
 * connection, before the upstream filter's hold for the backoff floor ends, so a held
 * retry would lose up to `backoff` of its budget: the hold is added to Envoy's timer.
 */
export function perTryTimeoutMs(policy: Policy): i64 {
  const base = <i64>policy.backendRequestMs;
  if (!policy.hasRetry || policy.attempts == 0 || policy.backoffMs <= 0) return base;
  return min<i64>(base + <i64>policy.backoffMs, <i64>i32.MAX_VALUE);
}

/**
 * Writes the router headers for `policy`. Call after stripClientControlHeaders.
 * `pinned`: the request is pinned to a session's backend; if that backend cannot be
 * reached, one retry elsewhere is allowed even without a retry stanza (Envoy's retries
 * ignore the pin), so a session falls back to load balancing (GEP-1619).
 */
export function applyRouterHeaders(policy: Policy, pinned: bool): void {
  const req = HeaderMapType.RequestHeaders;
  if (!policy.hasRetry && pinned) {
    setHeader(req, H_RETRY_ON, RETRY_ON_CONNECTION);
    setHeader(req, H_MAX_RETRIES, '1');
  } else if (policy.hasRetry) {
    const method = getHeader(req, H_METHOD);
    setHeader(req, H_RETRY_ON, retryOn(policy, method != null ? method : ''));
    setHeader(req, H_MAX_RETRIES, policy.attempts.toString());
    if (policy.codes.length > 0) setHeader(req, H_RETRIABLE_STATUS_CODES, policy.codes);
    if (policy.grpcReasons.length > 0) setHeader(req, H_RETRY_GRPC_ON, policy.grpcReasons);
  } else {
    // No retry stanza: no retries, whatever the route says.
    setHeader(req, H_MAX_RETRIES, '0');
  }
  if (policy.requestMs >= 0) setHeader(req, H_UPSTREAM_RQ_TIMEOUT_MS, policy.requestMs.toString());
  if (policy.backendRequestMs > 0) {
    setHeader(req, H_UPSTREAM_RQ_PER_TRY_TIMEOUT_MS, perTryTimeoutMs(policy).toString());
  }
}
