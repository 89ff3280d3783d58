// The backoff floor inside the filter: the upstream role holds a retry attempt until
// `backoff` after the previous attempt ended, and the root's tick resumes it. Driven
// with a controlled clock in the emulator; tests/e2e/retry-semantics.test.ts measures
// the same thing against Envoy.
import { describe, expect, it } from 'vitest';
import type { Policy } from '../../extproc/src/policy/policy.js';
import { encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import type { Headers } from '../emulator/proxy-wasm-host.js';
import { METADATA_POLICY, ROUTE_POLICY, startedHost } from './filter-harness.js';

const UPSTREAM_ROOT = 100;
const CONTINUE = 0;
const STOP_ALL_AND_BUFFER = 3;
const ms = (n: number): bigint => BigInt(n) * 1_000_000n;

function policy(backoffMs: number, backendRequestMs?: number): Policy {
  return {
    rule: 'httproute/default/shop/rule/0',
    kind: 'http',
    retry: { attempts: 3, codes: [503], backoffMs, grpcReasons: [] },
    ...(backendRequestMs === undefined ? {} : { timeouts: { backendRequestMs } }),
  };
}

async function gateway(p: Policy) {
  let now = ms(1_000_000);
  const host = await startedHost({ now: () => now });
  expect(host.startPlugin(UPSTREAM_ROOT, '{"role": "upstream"}')).toBe(true);
  const request: Headers = [
    [':method', 'GET'],
    [':path', '/cart'],
    [':authority', 'shop.example'],
    ['x-request-id', 'req-1'],
  ];
  const downstream = host.newStream({ [METADATA_POLICY]: encodePolicyToken(p) });
  downstream.sendRequestHeaders(request);
  return {
    host,
    downstream,
    request,
    setNow: (t: bigint) => (now = t),
    now: () => now,
    attempt: () => {
      const s = host.newStream({}, UPSTREAM_ROOT);
      return { stream: s, action: s.sendRequestHeaders(request) };
    },
  };
}

describe('backoff floor', () => {
  it('lets the first attempt go at once and holds the retry until the floor', async () => {
    const g = await gateway(policy(200));
    const first = g.attempt();
    expect(first.action).toBe(CONTINUE);
    const failedAt = g.now();
    first.stream.sendResponseHeaders([[':status', '503']]);
    first.stream.complete();

    g.setNow(failedAt + ms(3)); // Envoy's own backoff fired almost at once
    const retry = g.attempt();
    expect(retry.action).toBe(STOP_ALL_AND_BUFFER);
    expect(g.host.tickPeriodMs).toBeGreaterThan(0);

    g.setNow(failedAt + ms(150));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(0);

    g.setNow(failedAt + ms(200));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(1);
    // Nothing held any more: the tick is switched off again.
    expect(g.host.tickPeriodMs).toBe(0);
    expect(g.host.metric('steadfast_retry_held_total')).toBe(1n);
    expect(g.host.metric('steadfast_retry_held_ms_total')).toBe(197n);
  });

  it('measures the floor from the end of a reset or timed-out attempt too', async () => {
    const g = await gateway(policy(100));
    const first = g.attempt();
    const start = g.now();
    g.setNow(start + ms(80)); // the attempt dies without response headers
    first.stream.complete();
    g.setNow(start + ms(81));
    const retry = g.attempt();
    expect(retry.action).toBe(STOP_ALL_AND_BUFFER);
    g.setNow(start + ms(179));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(0);
    g.setNow(start + ms(180));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(1);
  });

  it('does not hold a retry that comes after the floor anyway', async () => {
    const g = await gateway(policy(50));
    const first = g.attempt();
    first.stream.sendResponseHeaders([[':status', '503']]);
    g.setNow(g.now() + ms(60));
    expect(g.attempt().action).toBe(CONTINUE);
  });

  it('never holds requests whose rule has no backoff, or no steadfast policy at all', async () => {
    const g = await gateway(policy(0));
    const first = g.attempt();
    first.stream.sendResponseHeaders([[':status', '503']]);
    expect(g.attempt().action).toBe(CONTINUE);

    const stranger = g.host.newStream({}, UPSTREAM_ROOT);
    expect(
      stranger.sendRequestHeaders([
        [':method', 'GET'],
        ['x-request-id', 'unknown'],
      ]),
    ).toBe(CONTINUE);
    const noId = g.host.newStream({}, UPSTREAM_ROOT);
    expect(noId.sendRequestHeaders([[':method', 'GET']])).toBe(CONTINUE);
  });

  it('forgets the request when it completes', async () => {
    const g = await gateway(policy(200));
    g.attempt().stream.sendResponseHeaders([[':status', '503']]);
    g.downstream.complete();
    expect(g.attempt().action).toBe(CONTINUE);
  });

  it('drops a held attempt whose stream went away, and stops ticking', async () => {
    const g = await gateway(policy(200));
    g.attempt().stream.sendResponseHeaders([[':status', '503']]);
    const retry = g.attempt();
    expect(retry.action).toBe(STOP_ALL_AND_BUFFER);
    retry.stream.complete();
    g.setNow(g.now() + ms(500));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(0);
    expect(g.host.tickPeriodMs).toBe(0);
  });

  it('gives Envoy a per-try timeout that covers the hold', async () => {
    const g = await gateway(policy(200, 300));
    expect(g.downstream.requestHeader('x-envoy-upstream-rq-per-try-timeout-ms')).toBe('500');
    const plain = await gateway(policy(0, 300));
    expect(plain.downstream.requestHeader('x-envoy-upstream-rq-per-try-timeout-ms')).toBe('300');
  });
});

describe('backoff floor in gateway mode', () => {
  // Gateway mode's upstream half: match_delegate lets retries in only, and each reads its
  // floor from the route's policy token (the same token the downstream half reads).
  async function gatewayUpstream() {
    let now = ms(5_000_000);
    const host = await startedHost({ now: () => now });
    expect(host.startPlugin(UPSTREAM_ROOT, '{"role": "upstream", "gatewayRoutes": true}')).toBe(true);
    return {
      host,
      setNow: (t: bigint) => (now = t),
      now: () => now,
      attempt: (token: string | undefined, attemptCount: string) => {
        const s = host.newStream(token === undefined ? {} : { [ROUTE_POLICY]: token }, UPSTREAM_ROOT);
        return {
          stream: s,
          action: s.sendRequestHeaders([
            [':method', 'GET'],
            [':path', '/cart'],
            ['x-envoy-attempt-count', attemptCount],
          ]),
        };
      },
    };
  }

  it("holds a retry for the floor in the route's token, from when it arrives", async () => {
    const g = await gatewayUpstream();
    const arrived = g.now();
    const retry = g.attempt(encodePolicyToken(policy(120)), '2');
    expect(retry.action).toBe(STOP_ALL_AND_BUFFER);
    g.setNow(arrived + ms(119));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(0);
    g.setNow(arrived + ms(120));
    g.host.tick(UPSTREAM_ROOT);
    expect(retry.stream.resumedRequests).toBe(1);
    expect(g.host.metric('steadfast_retry_held_ms_total')).toBe(120n);
  });

  it('lets through a first attempt, a rule without a floor, and a route without a token', async () => {
    const g = await gatewayUpstream();
    expect(g.attempt(encodePolicyToken(policy(120)), '1').action).toBe(CONTINUE);
    expect(g.attempt(encodePolicyToken(policy(0)), '2').action).toBe(CONTINUE);
    expect(g.attempt(undefined, '2').action).toBe(CONTINUE);
    expect(g.attempt('sf1;not a token', '2').action).toBe(CONTINUE);
    expect(g.host.metric('steadfast_retry_held_total')).toBe(0n);
  });
});
