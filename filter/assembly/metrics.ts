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

  define(): void {
    this.requests = defineCounter('steadfast_requests_total');
    this.policyApplied = defineCounter('steadfast_policy_applied_total');
    this.policyMissing = defineCounter('steadfast_policy_missing_total');
    this.policyInvalid = defineCounter('steadfast_policy_invalid_total');
    this.retryHeld = defineCounter('steadfast_retry_held_total');
    this.retryHeldMs = defineCounter('steadfast_retry_held_ms_total');
    this.retryGateFull = defineCounter('steadfast_retry_gate_full_total');
  }
}
