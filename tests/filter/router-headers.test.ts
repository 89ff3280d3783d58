// The one encoder (TypeScript) and the one decoder (AssemblyScript) agree: each policy
// becomes exactly the router headers docs/retries.md's semantics call for.
import { describe, expect, it } from 'vitest';
import type { GrpcRetryReason, Policy } from '../../extproc/src/policy/policy.js';
import { encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import { METADATA_POLICY, startedHost } from './filter-harness.js';

const CONNECTION = 'connect-failure,refused-stream,reset-before-request';
const IDEMPOTENT = `${CONNECTION},reset`;

function rule(extra: Partial<Policy>): Policy {
  return { rule: 'httproute/default/shop/rule/0', kind: 'http', ...extra };
}

async function routerHeaders(
  policy: Policy,
  method = 'GET',
  clientHeaders: Array<[string, string]> = [],
): Promise<Record<string, string>> {
  const host = await startedHost();
  const s = host.newStream({ [METADATA_POLICY]: encodePolicyToken(policy) });
  s.sendRequestHeaders([
    [':method', method],
    [':path', '/'],
    [':authority', 'shop.example'],
    ...clientHeaders,
  ]);
  expect(host.metric('steadfast_policy_applied_total')).toBe(1n);
  return Object.fromEntries(s.requestHeaders.filter(([k]) => k.startsWith('x-envoy-')));
}

const retry = (attempts: number, codes: number[] = [], grpcReasons: GrpcRetryReason[] = []) => ({
  attempts,
  codes,
  backoffMs: 0,
  grpcReasons,
});

describe('retry headers', () => {
  it.each([
    [
      'GET with codes',
      'GET',
      rule({ retry: retry(3, [500]) }),
      {
        'x-envoy-retry-on': `${IDEMPOTENT},retriable-status-codes`,
        'x-envoy-retriable-status-codes': '500',
        'x-envoy-max-retries': '3',
      },
    ],
    [
      'POST with codes: no post-send reset, no per-try timeout retry',
      'POST',
      rule({ retry: retry(2, [500, 502, 503, 504]) }),
      {
        'x-envoy-retry-on': `${CONNECTION},retriable-status-codes`,
        'x-envoy-retriable-status-codes': '500,502,503,504',
        'x-envoy-max-retries': '2',
      },
    ],
    [
      'no codes retries connection failures only',
      'PUT',
      rule({ retry: retry(1) }),
      {
        'x-envoy-retry-on': IDEMPOTENT,
        'x-envoy-max-retries': '1',
      },
    ],
    [
      'PATCH is not idempotent',
      'PATCH',
      rule({ retry: retry(1) }),
      {
        'x-envoy-retry-on': CONNECTION,
        'x-envoy-max-retries': '1',
      },
    ],
    [
      'gRPC reasons',
      'POST',
      { ...rule({ retry: retry(2, [], ['unavailable', 'resource-exhausted']) }), kind: 'grpc' as const },
      {
        'x-envoy-retry-on': CONNECTION,
        'x-envoy-retry-grpc-on': 'unavailable,resource-exhausted',
        'x-envoy-max-retries': '2',
      },
    ],
    ['no retry stanza means no retries', 'GET', rule({}), { 'x-envoy-max-retries': '0' }],
  ])('%s', async (_name, method, policy, expected) => {
    expect(await routerHeaders(policy, method)).toEqual(expected);
  });
});

describe('timeout headers', () => {
  it.each([
    [
      'request and backendRequest',
      { requestMs: 400, backendRequestMs: 200 },
      {
        'x-envoy-upstream-rq-timeout-ms': '400',
        'x-envoy-upstream-rq-per-try-timeout-ms': '200',
      },
    ],
    ['request 0s disables the timeout', { requestMs: 0 }, { 'x-envoy-upstream-rq-timeout-ms': '0' }],
    ['backendRequest 0s sets no per-try timeout', { backendRequestMs: 0 }, {}],
    ['unset leaves the route default', {}, {}],
  ])('%s', async (_name, timeouts, expected) => {
    expect(await routerHeaders(rule({ timeouts }))).toEqual({ 'x-envoy-max-retries': '0', ...expected });
  });
});

describe('client control headers', () => {
  const hostile: Array<[string, string]> = [
    ['x-envoy-max-retries', '10'],
    ['x-envoy-retry-on', '5xx'],
    ['x-envoy-retriable-status-codes', '503'],
    ['x-envoy-upstream-rq-timeout-ms', '1'],
    ['x-envoy-upstream-rq-per-try-timeout-ms', '1'],
    ['x-envoy-retry-grpc-on', 'internal'],
    ['x-envoy-hedge-on-per-try-timeout', 'true'],
    ['x-envoy-retriable-header-names', 'x-foo'],
  ];

  it('never survive, with or without a retry stanza', async () => {
    expect(await routerHeaders(rule({ retry: retry(1, [500]) }), 'GET', hostile)).toEqual({
      'x-envoy-retry-on': `${IDEMPOTENT},retriable-status-codes`,
      'x-envoy-retriable-status-codes': '500',
      'x-envoy-max-retries': '1',
    });
    expect(await routerHeaders(rule({}), 'GET', hostile)).toEqual({ 'x-envoy-max-retries': '0' });
  });
});
