// rules[].retry (GEP-1731 on HTTPRoute, GEP-3440 on GRPCRoute) and rules[].timeouts (GEP-1742).
import type { FieldPath } from '../diagnostic.js';
import { sharedShape } from '../../json.js';
import { type Fields, type Rec, exact } from '../fields.js';
import { GRPC_RETRY_REASONS, type GrpcRetryReason } from '../../policy/policy.js';
import type { RetrySpec, TimeoutsSpec } from '../model.js';
import { durationField } from './duration-field.js';

/** GEP-3440's proposal spells reasons in lower-case-dashes; the gRPC enum spelling is accepted too. */
const UPPER_REASONS: Readonly<Record<string, string>> = Object.fromEntries(
  GRPC_RETRY_REASONS.map((r) => [r.toUpperCase().replace(/-/g, '_'), r]),
);

export function decodeRetry(rule: Rec, path: FieldPath, f: Fields, grpc: boolean): RetrySpec | undefined {
  const retry = f.rec(rule, 'retry', path);
  if (!retry) return undefined;
  const at = [...path, 'retry'];
  f.known(retry, at, grpc ? ['reasons', 'attempts', 'backoff'] : ['codes', 'attempts', 'backoff']);
  const codes: number[] = [];
  const reasons: GrpcRetryReason[] = [];
  if (grpc) {
    f.list(retry, 'reasons', at).forEach((r, i) => {
      const v = f.checkStr(r, [...at, 'reasons', i], { required: true });
      if (v === undefined) return;
      const norm = (UPPER_REASONS[v] ?? v) as GrpcRetryReason;
      if (!GRPC_RETRY_REASONS.includes(norm)) {
        f.add(
          [...at, 'reasons', i],
          'not-in-enum',
          `${JSON.stringify(v)} is not one of ${GRPC_RETRY_REASONS.join(', ')} (or ${Object.keys(UPPER_REASONS).join(', ')})`,
        );
        return;
      }
      if (!reasons.includes(norm)) reasons.push(norm);
    });
  } else {
    f.list(retry, 'codes', at).forEach((c, i) => {
      const v = f.checkInt(c, [...at, 'codes', i], { required: true, min: 400, max: 599 });
      if (v !== undefined && !codes.includes(v)) codes.push(v);
    });
  }
  const attempts = f.int(retry, 'attempts', at, { min: 1, max: 2_147_483_647 });
  const backoffMs = durationField(retry, 'backoff', at, f);
  return sharedShape({
    ...(attempts !== undefined ? { attempts } : {}),
    // Exactly as long as they are: a list grown by push keeps room for 17.
    codes: exact(codes),
    ...(backoffMs !== undefined ? { backoffMs } : {}),
    reasons: exact(reasons),
  });
}

export function decodeTimeouts(rule: Rec, path: FieldPath, f: Fields): TimeoutsSpec | undefined {
  const t = f.rec(rule, 'timeouts', path);
  if (!t) return undefined;
  const at = [...path, 'timeouts'];
  f.known(t, at, ['request', 'backendRequest']);
  const requestMs = durationField(t, 'request', at, f);
  const backendRequestMs = durationField(t, 'backendRequest', at, f);
  if (
    requestMs !== undefined &&
    backendRequestMs !== undefined &&
    requestMs !== 0 &&
    backendRequestMs > requestMs
  ) {
    f.add(at, 'rule-violation', 'backendRequest timeout cannot be longer than request timeout');
  }
  return {
    ...(requestMs !== undefined ? { requestMs } : {}),
    ...(backendRequestMs !== undefined ? { backendRequestMs } : {}),
  };
}
