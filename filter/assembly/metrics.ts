// The filter's counters, defined once per configure. Envoy exposes them with the
// `wasmcustom.` prefix in its stats.
import { defineCounter, NO_METRIC } from './abi/host';

export class FilterMetrics {
  requests: u32 = NO_METRIC;
  policyApplied: u32 = NO_METRIC;
  policyMissing: u32 = NO_METRIC;
  policyInvalid: u32 = NO_METRIC;
  retryHeld: u32 = NO_METRIC;
  retryHeldMs: u32 = NO_METRIC;
  retryGateFull: u32 = NO_METRIC;
  sessionCreated: u32 = NO_METRIC;
  sessionResumed: u32 = NO_METRIC;
  sessionRenewed: u32 = NO_METRIC;
  sessionExpired: u32 = NO_METRIC;
  sessionRejected: u32 = NO_METRIC;
  sessionMoved: u32 = NO_METRIC;
  sessionUnavailable: u32 = NO_METRIC;
  answerCacheHit: u32 = NO_METRIC;
  answerCacheMiss: u32 = NO_METRIC;
  answerCacheStored: u32 = NO_METRIC;

  define(): void {
    this.requests = defineCounter('steadfast_requests_total');
    this.policyApplied = defineCounter('steadfast_policy_applied_total');
    this.policyMissing = defineCounter('steadfast_policy_missing_total');
    this.policyInvalid = defineCounter('steadfast_policy_invalid_total');
    this.retryHeld = defineCounter('steadfast_retry_held_total');
    this.retryHeldMs = defineCounter('steadfast_retry_held_ms_total');
    this.retryGateFull = defineCounter('steadfast_retry_gate_full_total');
    this.sessionCreated = defineCounter('steadfast_session_created_total');
    this.sessionResumed = defineCounter('steadfast_session_resumed_total');
    this.sessionRenewed = defineCounter('steadfast_session_renewed_total');
    this.sessionExpired = defineCounter('steadfast_session_expired_total');
    this.sessionRejected = defineCounter('steadfast_session_rejected_total');
    this.sessionMoved = defineCounter('steadfast_session_moved_total');
    this.sessionUnavailable = defineCounter('steadfast_session_unavailable_total');
    this.answerCacheHit = defineCounter('steadfast_answer_cache_hit_total');
    this.answerCacheMiss = defineCounter('steadfast_answer_cache_miss_total');
    this.answerCacheStored = defineCounter('steadfast_answer_cache_stored_total');
  }
}
