// What a rule's retry and timeouts mean to Envoy's router, decided once per rule when the IR
// is built (gateway-ir.ts). Gateway mode maps it to each route's `retry_policy` and `timeout`;
// attach mode's filter writes the same values as router headers
// (filter/assembly/policy/router-values.ts, which tests/ir/router-plan.test.ts
// holds to this module). docs/retries.md is the table a user reads.
import type { Policy } from '../policy/policy.js';

/** Connection-level failures, retried whenever a rule has a retry stanza. */
const RETRY_ON_CONNECTION: readonly string[] = ['connect-failure', 'refused-stream', 'reset-before-request'];
/**
 * Safe to send twice (RFC 9110 §9.2.2): these also retry a reset after the request was
 * sent and a per-try timeout, which Envoy retries only under `reset`, `5xx` or
 * `gateway-error`.
 */
export const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];
const RETRY_ON_AFTER_SEND = 'reset';
const RETRY_ON_CODES = 'retriable-status-codes';

/** What the router does for one class of methods. */
export interface RouterRetry {
  /** Envoy `retry_on` conditions (HTTP and gRPC ones alike), in a fixed order. */
  readonly retryOn: readonly string[];
  /** Retries after the first try; 0 when the rule has no retry stanza. */
  readonly numRetries: number;
  /** Status codes retried exactly (`retriable_status_codes`). */
  readonly codes: readonly number[];
}

export interface RouterPlan {
  /** GET, HEAD, OPTIONS, TRACE, PUT, DELETE. */
  readonly idempotent: RouterRetry;
  /** Every other method (POST, PATCH, CONNECT, extension methods). */
  readonly other: RouterRetry;
  /**
   * Whether the two differ (the idempotent methods also retry under `reset`): a route that
   * does not fix its method takes the other methods' retries and switches on the filter that
   * adds `reset` for the idempotent ones (envoy/http-filters.ts).
   */
  readonly resetByMethod: boolean;
  /** The whole exchange, retries and backoff included; 0 disables; undefined: Envoy's default. */
  readonly requestTimeoutMs?: number;
  /** Envoy's per-try timeout: `backendRequest`, plus the backoff hold when both are set. */
  readonly perTryTimeoutMs?: number;
  /** The backoff floor (ms); 0 when there is none or nothing is retried. */
  readonly backoffMs: number;
}

const NO_RETRY: RouterRetry = { retryOn: [], numRetries: 0, codes: [] };

/**
 * The conditions without gRPC reasons, one list per case shared by every rule, by
 * (idempotent ? 1 : 0) + (status codes ? 2 : 0): a list per rule (two per rule, each spread into
 * V8's 17-slot backing store) held 4 MiB at 10,000 routes.
 */
const RETRY_ON: readonly (readonly string[])[] = [
  RETRY_ON_CONNECTION,
  [...RETRY_ON_CONNECTION, RETRY_ON_AFTER_SEND],
  [...RETRY_ON_CONNECTION, RETRY_ON_CODES],
  [...RETRY_ON_CONNECTION, RETRY_ON_AFTER_SEND, RETRY_ON_CODES],
];

/** Envoy's `retry_on`, in its fixed order: connection failures, reset, status codes, then the gRPC reasons. */
function retryConditions(
  idempotent: boolean,
  codes: boolean,
  grpcReasons: readonly string[],
): readonly string[] {
  const shared = RETRY_ON[(idempotent ? 1 : 0) + (codes ? 2 : 0)] as readonly string[];
  return grpcReasons.length === 0 ? shared : shared.concat(grpcReasons);
}

function routerRetry(policy: Policy, idempotent: boolean): RouterRetry {
  const retry = policy.retry;
  if (!retry) {
    // A session's pinned backend that cannot be reached may be retried once elsewhere
    // even without a retry stanza ("the implementation SHOULD ... route to another
    // backend", GEP-1619), retrying what a stanza would. The route keeps the conditions
    // with no retries; the filter raises the count to one for a
    // request it pinned.
    if (!policy.session) return NO_RETRY;
    return { retryOn: retryConditions(idempotent, false, []), numRetries: 0, codes: [] };
  }
  return {
    retryOn: retryConditions(idempotent, retry.codes.length > 0, retry.grpcReasons),
    numRetries: retry.attempts,
    codes: retry.codes,
  };
}

/**
 * The per-try timeout Envoy is given. Envoy starts a retry's per-try clock when it has a
 * connection, before the upstream filter's hold for the backoff floor ends, so a held
 * retry would lose up to `backoff` of its budget: the hold is added to Envoy's timer.
 */
function perTryTimeoutMs(policy: Policy, backoffMs: number): number | undefined {
  const backendRequestMs = policy.timeouts?.backendRequestMs;
  if (backendRequestMs === undefined || backendRequestMs <= 0) return undefined;
  return Math.min(backendRequestMs + backoffMs, 2_147_483_647);
}

export function routerPlan(policy: Policy): RouterPlan {
  const retry = policy.retry;
  const backoffMs = retry && retry.attempts > 0 ? retry.backoffMs : 0;
  const requestTimeoutMs = policy.timeouts?.requestMs;
  const perTry = perTryTimeoutMs(policy, backoffMs);
  return {
    idempotent: routerRetry(policy, true),
    other: routerRetry(policy, false),
    // Every gRPC call is a POST: the other methods' conditions only.
    resetByMethod: (retry !== undefined || policy.session !== undefined) && policy.kind !== 'grpc',
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(perTry !== undefined ? { perTryTimeoutMs: perTry } : {}),
    backoffMs,
  };
}
