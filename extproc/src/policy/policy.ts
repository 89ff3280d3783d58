// The resolved policy of one route rule: plain data, free of Gateway API types.
// Both modes hand exactly this to the filter, as a policy token (policy-token.ts, the
// codec). With the codec, this is the policy module: the Gateway API decoder takes its
// gRPC reasons from here, and a test holds the filter's decoder to both.

/**
 * The gRPC retry reasons (GEP-3440) in lower-case-dashes: what the Gateway API decoder
 * accepts (after normalising upper-case names), the token carries and Envoy's
 * `x-envoy-retry-grpc-on` takes.
 */
export const GRPC_RETRY_REASONS = [
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
] as const;
export type GrpcRetryReason = (typeof GRPC_RETRY_REASONS)[number];

export interface RetryPolicy {
  /** Retries after the first try (GEP-1731 `attempts`; unset means 1). */
  readonly attempts: number;
  /** HTTP status codes retried exactly; empty retries connection-level failures only. */
  readonly codes: readonly number[];
  /** The backoff floor in milliseconds: no retry starts earlier. 0 means none. */
  readonly backoffMs: number;
  /** GRPCRoute reasons (GEP-3440); empty on HTTPRoute rules. */
  readonly grpcReasons: readonly GrpcRetryReason[];
}

export interface TimeoutPolicy {
  /** `timeouts.request` in ms; 0 disables; undefined leaves Envoy's route default. */
  readonly requestMs?: number;
  /** `timeouts.backendRequest` (per try) in ms; 0 disables; undefined leaves it unset. */
  readonly backendRequestMs?: number;
}

export type SessionType = 'cookie' | 'header';
export type CookieLifetime = 'session' | 'permanent';

export interface SessionPolicy {
  readonly type: SessionType;
  /** Cookie or header name. */
  readonly name: string;
  /** Cookie Path attribute; `/` unless configured. */
  readonly path: string;
  readonly lifetime: CookieLifetime;
  /** Absolute timeout in seconds, enforced inside the token; undefined means none. */
  readonly absoluteTimeoutS?: number;
  /** Idle timeout in seconds (sliding); undefined means none. */
  readonly idleTimeoutS?: number;
}

export type RouteKind = 'http' | 'grpc';

export interface Policy {
  /** The rule it came from, e.g. `httproute/default/shop/rule/1`. */
  readonly rule: string;
  readonly kind: RouteKind;
  readonly retry?: RetryPolicy;
  readonly timeouts?: TimeoutPolicy;
  readonly session?: SessionPolicy;
}
