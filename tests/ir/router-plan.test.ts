// The retry and timeout semantics in one place: the plan gateway mode compiles into its
// routes, and — for the same policies — exactly the router headers attach mode's filter
// writes, so the two modes cannot drift apart.
import { describe, expect, it } from 'vitest';
import { GRPC_RETRY_REASONS } from '../../extproc/src/policy/policy.js';
import type { GrpcRetryReason, Policy } from '../../extproc/src/policy/policy.js';
import { encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import { durationMs } from '../../extproc/src/envoy/envoy-duration.js';
import { IDEMPOTENT_METHODS, routerPlan } from '../../extproc/src/ir/router-plan.js';
import { METADATA_POLICY, startedHost } from '../filter/filter-harness.js';
import { rng } from '../resolve/random-table.js';

const rule = (extra: Partial<Policy>): Policy => ({
  rule: 'httproute/default/shop/rule/0',
  kind: 'http',
  ...extra,
});

describe('routerPlan', () => {
  it('retries codes exactly, connection failures always, post-send resets only for idempotent methods', () => {
    const plan = routerPlan(
      rule({ retry: { attempts: 3, codes: [500, 503], backoffMs: 0, grpcReasons: [] } }),
    );
    expect(plan.idempotent).toEqual({
      retryOn: [
        'connect-failure',
        'refused-stream',
        'reset-before-request',
        'reset',
        'retriable-status-codes',
      ],
      numRetries: 3,
      codes: [500, 503],
    });
    expect(plan.other.retryOn).toEqual([
      'connect-failure',
      'refused-stream',
      'reset-before-request',
      'retriable-status-codes',
    ]);
    expect(plan.resetByMethod).toBe(true);
  });

  it('no retry stanza: nothing retried, no reset by method', () => {
    const plan = routerPlan(rule({ timeouts: { requestMs: 500 } }));
    expect(plan.idempotent.retryOn).toEqual([]);
    expect(plan.other.numRetries).toBe(0);
    expect(plan.resetByMethod).toBe(false);
    expect(plan.requestTimeoutMs).toBe(500);
  });

  it('a session without a retry stanza keeps the fallback conditions with no retries', () => {
    const plan = routerPlan(rule({ session: { type: 'cookie', name: 's', path: '/', lifetime: 'session' } }));
    expect(plan.idempotent).toEqual({
      retryOn: ['connect-failure', 'refused-stream', 'reset-before-request', 'reset'],
      numRetries: 0,
      codes: [],
    });
    expect(plan.resetByMethod).toBe(true);
  });

  it('whenever a route adds reset by method, the idempotent retries are the others plus reset alone', () => {
    // One route carries plan.other and the filter adds `reset` for idempotent requests: any other
    // difference between the two would never reach an idempotent request.
    const random = rng(3440);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    let adding = 0;
    for (let i = 0; i < 300; i++) {
      const plan = routerPlan(
        rule({
          kind: random() < 0.3 ? 'grpc' : 'http',
          ...(random() < 0.7
            ? {
                retry: {
                  attempts: Math.floor(random() * 4),
                  codes: random() < 0.5 ? [] : [pick([500, 502, 503]), pick([429, 504])],
                  backoffMs: pick([0, 10, 200]),
                  grpcReasons: random() < 0.3 ? [pick(GRPC_RETRY_REASONS)] : [],
                },
              }
            : {}),
          ...(random() < 0.5
            ? { session: { type: 'cookie', name: 's', path: '/', lifetime: 'session' } }
            : {}),
          ...(random() < 0.5 ? { timeouts: { backendRequestMs: pick([100, 400]) } } : {}),
        }),
      );
      if (!plan.resetByMethod) continue;
      adding++;
      expect(plan.idempotent.retryOn).toContain('reset');
      expect(plan.other.retryOn).not.toContain('reset');
      expect({ ...plan.idempotent, retryOn: plan.idempotent.retryOn.filter((c) => c !== 'reset') }).toEqual(
        plan.other,
      );
    }
    expect(adding).toBeGreaterThan(100);
  });

  it('GRPCRoute: one route with the reasons, no post-send reset (every call is a POST)', () => {
    const plan = routerPlan({
      rule: 'grpcroute/default/echo/rule/0',
      kind: 'grpc',
      retry: { attempts: 2, codes: [], backoffMs: 50, grpcReasons: ['unavailable', 'internal'] },
    });
    expect(plan.resetByMethod).toBe(false);
    expect(plan.other.retryOn).toEqual([
      'connect-failure',
      'refused-stream',
      'reset-before-request',
      'unavailable',
      'internal',
    ]);
    expect(plan.backoffMs).toBe(50);
  });

  it('the per-try timeout carries the backoff hold; attempts 0 means no floor', () => {
    const retry = { attempts: 2, codes: [500], backoffMs: 100, grpcReasons: [] as GrpcRetryReason[] };
    expect(routerPlan(rule({ retry, timeouts: { backendRequestMs: 300 } })).perTryTimeoutMs).toBe(400);
    const none = routerPlan(rule({ retry: { ...retry, attempts: 0 }, timeouts: { backendRequestMs: 300 } }));
    expect(none.perTryTimeoutMs).toBe(300);
    expect(none.backoffMs).toBe(0);
    expect(routerPlan(rule({ retry, timeouts: { backendRequestMs: 0 } })).perTryTimeoutMs).toBeUndefined();
  });

  it.each([
    [0, '0s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [250, '0.25s'],
    [1, '0.001s'],
  ])('durationMs(%i) = %s', (ms, text) => {
    expect(durationMs(ms)).toBe(text);
  });
});

/** The router headers attach mode's filter writes for one policy and method. */
async function filterHeaders(policy: Policy, method: string): Promise<Record<string, string>> {
  const host = await startedHost();
  const s = host.newStream({ [METADATA_POLICY]: encodePolicyToken(policy) });
  s.sendRequestHeaders([
    [':method', method],
    [':path', '/'],
    [':authority', 'shop.example'],
  ]);
  return Object.fromEntries(s.requestHeaders.filter(([k]) => k.startsWith('x-envoy-')));
}

/** The same plan, spelled as router headers. */
function planHeaders(policy: Policy, method: string): Record<string, string> {
  const plan = routerPlan(policy);
  const retry = IDEMPOTENT_METHODS.includes(method) ? plan.idempotent : plan.other;
  const reasons = new Set<string>(GRPC_RETRY_REASONS);
  const out: Record<string, string> = { 'x-envoy-max-retries': String(retry.numRetries) };
  const httpOn = retry.retryOn.filter((c) => !reasons.has(c));
  const grpcOn = retry.retryOn.filter((c) => reasons.has(c));
  if (httpOn.length > 0) out['x-envoy-retry-on'] = httpOn.join(',');
  if (retry.codes.length > 0) out['x-envoy-retriable-status-codes'] = retry.codes.join(',');
  if (grpcOn.length > 0) out['x-envoy-retry-grpc-on'] = grpcOn.join(',');
  if (plan.requestTimeoutMs !== undefined)
    out['x-envoy-upstream-rq-timeout-ms'] = String(plan.requestTimeoutMs);
  if (plan.perTryTimeoutMs !== undefined) {
    out['x-envoy-upstream-rq-per-try-timeout-ms'] = String(plan.perTryTimeoutMs);
  }
  return out;
}

describe('attach mode writes what gateway mode compiles', () => {
  it('for 200 random policies and methods, the filter headers equal the plan', async () => {
    const random = rng(1731);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'POST', 'PATCH'];
    for (let i = 0; i < 200; i++) {
      const grpc = random() < 0.3;
      const policy: Policy = {
        rule: `route/${i}`,
        kind: grpc ? 'grpc' : 'http',
        ...(random() < 0.8
          ? {
              retry: {
                attempts: Math.floor(random() * 4),
                codes: random() < 0.5 ? [] : [pick([500, 502, 503]), pick([429, 504])],
                backoffMs: pick([0, 10, 200]),
                grpcReasons: grpc && random() < 0.7 ? [pick(GRPC_RETRY_REASONS)] : [],
              },
            }
          : {}),
        ...(random() < 0.6
          ? {
              timeouts: {
                ...(random() < 0.5 ? { requestMs: pick([0, 500, 2000]) } : {}),
                ...(random() < 0.5 ? { backendRequestMs: pick([0, 100, 400]) } : {}),
              },
            }
          : {}),
      };
      const method = grpc ? 'POST' : pick(methods);
      expect(await filterHeaders(policy, method), JSON.stringify({ policy, method })).toEqual(
        planHeaders(policy, method),
      );
    }
  });
});
