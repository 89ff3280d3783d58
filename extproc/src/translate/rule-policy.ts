// A route rule's retry, timeouts and session persistence → the Policy the filter applies.
import { createHash } from 'node:crypto';
import type { RetrySpec, SessionSpec, TimeoutsSpec } from '../gatewayapi/model.js';
import type { Policy, RouteKind, SessionPolicy } from '../policy/policy.js';

/** A cookie or header name unique per route rule, so two rules never share a session. */
function generatedSessionName(ruleId: string): string {
  return `sf-${createHash('sha256').update(ruleId).digest('hex').slice(0, 12)}`;
}

function seconds(ms: number | undefined): number | undefined {
  // Sessions count whole seconds; a sub-second timeout rounds up rather than to "no timeout".
  return ms === undefined || ms === 0 ? undefined : Math.ceil(ms / 1000);
}

function sessionPolicy(spec: SessionSpec, ruleId: string): SessionPolicy {
  const absoluteTimeoutS = seconds(spec.absoluteTimeoutMs);
  const idleTimeoutS = seconds(spec.idleTimeoutMs);
  return {
    type: spec.type === 'Header' ? 'header' : 'cookie',
    name: spec.name ?? generatedSessionName(ruleId),
    // "When not specified, implementations MUST default the cookie path to /."
    path: spec.path ?? '/',
    lifetime: spec.lifetime === 'Permanent' ? 'permanent' : 'session',
    ...(absoluteTimeoutS !== undefined ? { absoluteTimeoutS } : {}),
    ...(idleTimeoutS !== undefined ? { idleTimeoutS } : {}),
  };
}

export function rulePolicy(
  ruleId: string,
  kind: RouteKind,
  retry: RetrySpec | undefined,
  timeouts: TimeoutsSpec | undefined,
  session: SessionSpec | undefined,
): Policy {
  return {
    rule: ruleId,
    kind,
    ...(retry
      ? {
          retry: {
            // "attempts is the number of retries after the first try; unset means 1."
            attempts: retry.attempts ?? 1,
            codes: retry.codes,
            backoffMs: retry.backoffMs ?? 0,
            grpcReasons: retry.reasons,
          },
        }
      : {}),
    ...(timeouts && (timeouts.requestMs !== undefined || timeouts.backendRequestMs !== undefined)
      ? {
          timeouts: {
            ...(timeouts.requestMs !== undefined ? { requestMs: timeouts.requestMs } : {}),
            ...(timeouts.backendRequestMs !== undefined
              ? { backendRequestMs: timeouts.backendRequestMs }
              : {}),
          },
        }
      : {}),
    ...(session ? { session: sessionPolicy(session, ruleId) } : {}),
  };
}
