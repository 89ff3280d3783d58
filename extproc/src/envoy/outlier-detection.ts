// Passive health checking of a rule's endpoints: an endpoint that refuses connections, resets
// them or times out is ejected from load balancing for a while, so neither new requests nor
// a session pinned to it keep trying it. Only failures Envoy sees locally (connect failures,
// resets, timeouts) count: a backend's own 5xx answers never eject it, since GEP-1731 gives
// them to the retry stanza to handle, exactly as listed. docs/hardening.md has the reasons.
import type { Json } from '../json.js';

export interface OutlierDetectionOptions {
  /** Consecutive local failures (connect failure, reset, timeout) that eject an endpoint. */
  readonly consecutiveLocalOriginFailure?: number;
  /** How long the first ejection lasts; each further ejection of the same endpoint adds as much again. */
  readonly baseEjectionTime?: string;
  /** The longest an ejection lasts. */
  readonly maxEjectionTime?: string;
  /** How often ejected endpoints are checked for return. */
  readonly interval?: string;
  /** The share of a cluster's endpoints that may be ejected at once. */
  readonly maxEjectionPercent?: number;
}

const OUTLIER_DETECTION_DEFAULTS: Required<OutlierDetectionOptions> = {
  consecutiveLocalOriginFailure: 3,
  baseEjectionTime: '5s',
  maxEjectionTime: '30s',
  interval: '2s',
  // Envoy counts the ejection about to happen: at 50 % one endpoint of two or three can go,
  // and the only endpoint of a cluster never does (it would only send traffic to panic mode).
  maxEjectionPercent: 50,
};

/** The cluster's `outlier_detection`. */
export function outlierDetection(options: OutlierDetectionOptions = {}): Json {
  const o = { ...OUTLIER_DETECTION_DEFAULTS, ...options };
  return {
    // Local failures are counted apart from the backend's answers.
    split_external_local_origin_errors: true,
    consecutive_local_origin_failure: o.consecutiveLocalOriginFailure,
    enforcing_consecutive_local_origin_failure: 100,
    // A backend's 5xx answers are the retry stanza's business: tracked, never enforced.
    enforcing_consecutive_5xx: 0,
    enforcing_consecutive_gateway_failure: 0,
    enforcing_success_rate: 0,
    enforcing_local_origin_success_rate: 0,
    interval: o.interval,
    base_ejection_time: o.baseEjectionTime,
    max_ejection_time: o.maxEjectionTime,
    max_ejection_percent: o.maxEjectionPercent,
  };
}
