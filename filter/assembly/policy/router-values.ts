// The router header values of one policy, built once when its token is decoded (the
// decoded policy is cached per VM), so a request only copies strings to the host.

// Connection-level failures are always retried when a retry stanza exists.
const RETRY_ON_CONNECTION = 'connect-failure,refused-stream,reset-before-request';
// Idempotent methods also retry a reset after the request was sent and a per-try
// timeout: Envoy retries a per-try timeout only under `reset`, `5xx` or `gateway-error`.
const RETRY_ON_IDEMPOTENT = RETRY_ON_CONNECTION + ',reset';
const RETRIABLE_STATUS_CODES = ',retriable-status-codes';

export class RouterValues {
  /** `x-envoy-retry-on` for GET, HEAD, OPTIONS, TRACE, PUT, DELETE. */
  readonly retryOnIdempotent: string;
  /** `x-envoy-retry-on` for every other method. */
  readonly retryOnOther: string;
  readonly maxRetries: string;
  /** Empty when the policy leaves it unset. */
  readonly requestTimeoutMs: string;
  readonly perTryTimeoutMs: string;

  constructor(
    hasRetry: bool,
    attempts: i32,
    hasCodes: bool,
    backoffMs: i32,
    requestMs: i32,
    backendRequestMs: i32,
  ) {
    const codes = hasCodes ? RETRIABLE_STATUS_CODES : '';
    this.retryOnIdempotent = RETRY_ON_IDEMPOTENT + codes;
    this.retryOnOther = RETRY_ON_CONNECTION + codes;
    this.maxRetries = hasRetry ? attempts.toString() : '0';
    this.requestTimeoutMs = requestMs >= 0 ? requestMs.toString() : '';
    this.perTryTimeoutMs =
      backendRequestMs > 0
        ? perTryTimeoutMs(hasRetry && attempts > 0 ? backoffMs : 0, backendRequestMs).toString()
        : '';
  }
}

/**
 * The per-try timeout Envoy is given. Envoy starts a retry's per-try clock when it has a
 * connection, before the upstream filter's hold for the backoff floor ends, so a held
 * retry would lose up to `backoff` of its budget: the hold is added to Envoy's timer.
 */
function perTryTimeoutMs(backoffMs: i32, backendRequestMs: i32): i64 {
  if (backoffMs <= 0) return <i64>backendRequestMs;
  return min<i64>(<i64>backendRequestMs + <i64>backoffMs, <i64>i32.MAX_VALUE);
}
