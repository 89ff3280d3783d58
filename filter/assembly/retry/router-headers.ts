// Turns a policy into the Envoy router's retry and timeout headers (docs/retries.md).
// Envoy does the retrying; these headers tell it exactly what to retry.
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

/**
 * Writes the router headers for `policy`. Call after stripClientControlHeaders.
 * `pinned`: the request is pinned to a session's backend. If that backend cannot be
 * reached, one retry elsewhere is allowed even without a retry stanza (Envoy's retries
 * ignore the pin), so a session falls back to load balancing (GEP-1619). It retries
 * what a retry stanza would: connection failures, and for idempotent methods a reset
 * after sending — a killed backend's pooled connection fails that way.
 */
export function applyRouterHeaders(policy: Policy, pinned: bool): void {
  const req = HeaderMapType.RequestHeaders;
  const values = policy.router;
  if (policy.hasRetry || pinned) {
    const method = getHeader(req, H_METHOD);
    const idempotent = method != null && isIdempotent(method);
    setHeader(req, H_RETRY_ON, idempotent ? values.retryOnIdempotent : values.retryOnOther);
    setHeader(req, H_MAX_RETRIES, policy.hasRetry ? values.maxRetries : '1');
    if (policy.codes.length > 0) setHeader(req, H_RETRIABLE_STATUS_CODES, policy.codes);
    if (policy.grpcReasons.length > 0) setHeader(req, H_RETRY_GRPC_ON, policy.grpcReasons);
  } else {
    // No retry stanza: no retries, whatever the route says.
    setHeader(req, H_MAX_RETRIES, values.maxRetries);
  }
  if (values.requestTimeoutMs.length > 0) setHeader(req, H_UPSTREAM_RQ_TIMEOUT_MS, values.requestTimeoutMs);
  if (values.perTryTimeoutMs.length > 0)
    setHeader(req, H_UPSTREAM_RQ_PER_TRY_TIMEOUT_MS, values.perTryTimeoutMs);
}

/**
 * Gateway mode, a pinned request of a rule without a retry stanza: the route holds the
 * fallback's conditions with no retries, and this raises the count to one.
 */
export function allowPinnedFallback(): void {
  setHeader(HeaderMapType.RequestHeaders, H_MAX_RETRIES, '1');
}
