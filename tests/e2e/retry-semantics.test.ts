// Retries and timeouts as GEP-1731 and GEP-3440 mean them (docs/retries.md), against the
// real Envoy, the compiled filter and the real control service,
// driven by curl and grpcurl, in both modes: one table of Gateway API rules, served by
// gateway mode and by attach mode. Tables follow the Gateway API conformance tests'
// shape: request → response, plus the attempts the backend saw.
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';
import type { AttachRoute } from './support/attach-config.js';
import { curl } from './support/curl.js';
import { type GrpcGateway, startGrpcGateway } from './support/grpc-gateway.js';
import { grpcurlEcho } from './support/grpcurl.js';
import { MODES, type ModeStack, isGatewayMode, startMode } from './support/mode-stack.js';
import { filterCounter } from '../support/filter-builds.js';
import { POLICY_HEADER, withPolicy } from './support/with-policy.js';

// The HTTPRoute rules of the table, in Gateway API terms; both modes serve them.
const ROUTES: AttachRoute[] = [
  { name: 'codes-500', rules: [{ path: '/codes-500', retry: { attempts: 3, codes: [500] } }] },
  { name: 'codes-5xx', rules: [{ path: '/codes-5xx', retry: { attempts: 2, codes: [500, 502, 503, 504] } }] },
  { name: 'no-codes', rules: [{ path: '/no-codes', retry: { attempts: 3 } }] },
  {
    name: 'per-try',
    rules: [
      { path: '/per-try', retry: { attempts: 2 }, timeouts: { request: '10s', backendRequest: '200ms' } },
    ],
  },
  {
    name: 'budget',
    rules: [
      {
        path: '/budget',
        retry: { attempts: 5, codes: [500] },
        timeouts: { request: '400ms', backendRequest: '200ms' },
      },
    ],
  },
  { name: 'request-timeout', rules: [{ path: '/request-timeout', timeouts: { request: '500ms' } }] },
  { name: 'no-timeout', rules: [{ path: '/no-timeout', timeouts: { request: '0s' } }] },
  { name: 'backoff', rules: [{ path: '/backoff', retry: { attempts: 2, codes: [500], backoff: '200ms' } }] },
  { name: 'no-retry', rules: [{ path: '/no-retry' }] },
  { name: 'one-retry', rules: [{ path: '/one-retry', retry: { attempts: 1, codes: [500] } }] },
];

describe.each(MODES)('%s mode', (mode) => {
  let stack: ModeStack;

  beforeAll(async () => {
    stack = await startMode(mode, ROUTES);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  interface Attempt {
    attempt: number;
    arrivedAtMs: number;
    endedAtMs: number | null;
    status: number | null;
    outcome: string;
  }

  async function attempts(uuid: string): Promise<Attempt[]> {
    const b = stack.backends[0]!;
    const res = await fetch(`http://${b.address}:${b.port}/__attempts?uuid=${uuid}`);
    if (res.status === 404) return [];
    return ((await res.json()) as { attempts: Attempt[] }).attempts;
  }

  const TIME_TOTAL = 'curl-time-total=';

  interface Exchange {
    status: number;
    tries: number;
    elapsedMs: number;
    uuid: string;
    /** Whether the filter applied a policy (its debug header; attach mode only). */
    policy: boolean;
  }

  async function exchange(
    path: string,
    query: Record<string, string | number>,
    args: string[],
  ): Promise<Exchange> {
    const uuid = randomUUID();
    const qs = new URLSearchParams({
      uuid,
      ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
    });
    // curl's own clock (connect to last byte), not the test's: spawning curl on a busy
    // machine takes tens of milliseconds that are no part of the exchange.
    const res = await curl(`${stack.url}${path}?${qs}`, [...args, '-w', `\n${TIME_TOTAL}%{time_total}`]);
    const elapsedMs = Number(res.body.slice(res.body.lastIndexOf(TIME_TOTAL) + TIME_TOTAL.length)) * 1000;
    const policy = res.headers.has(POLICY_HEADER);
    return { status: res.status, tries: (await attempts(uuid)).length, elapsedMs, uuid, policy };
  }

  /** `count` exchanges at once, each with its rule's policy (support/with-policy.ts). */
  async function sendAll(
    count: number,
    path: string,
    query: Record<string, string | number>,
    args: string[] = [],
  ): Promise<Exchange[]> {
    return withPolicy(
      stack,
      count,
      () => exchange(path, query, args),
      (x) => x.policy,
    );
  }

  async function send(
    path: string,
    query: Record<string, string | number>,
    args: string[] = [],
  ): Promise<Exchange> {
    return (await sendAll(1, path, query, args))[0]!;
  }

  describe('HTTPRoute retry codes', () => {
    it.each([
      ['500 succeedAfter 2 → 200', { responseCode: 500, succeedAfter: 2 }, 200, 3],
      ['500 succeedAfter 4 → 500 (3 retries exhausted)', { responseCode: 500, succeedAfter: 4 }, 500, 4],
      [
        '503 succeedAfter 2 → 503 (an unlisted code is not retried)',
        { responseCode: 503, succeedAfter: 2 },
        503,
        1,
      ],
    ])('codes [500], attempts 3: %s', async (_name, query, status, tries) => {
      const r = await send('/codes-500', query);
      expect(r.status).toBe(status);
      expect(r.tries).toBe(tries);
    });

    it.each([500, 502, 503, 504])(
      'codes [500,502,503,504], attempts 2: %i succeedAfter 1 → 200',
      async (code) => {
        const r = await send('/codes-5xx', { responseCode: code, succeedAfter: 1 });
        expect(r.status).toBe(200);
        expect(r.tries).toBe(2);
      },
    );

    it.each([500, 502, 503, 504])(
      'codes [500,502,503,504], attempts 2: %i succeedAfter 3 → that code',
      async (code) => {
        const r = await send('/codes-5xx', { responseCode: code, succeedAfter: 3 });
        expect(r.status).toBe(code);
        expect(r.tries).toBe(3);
      },
    );
  });

  describe('HTTPRoute retry without codes: connection-level failures only', () => {
    it('GET reset after the request was read, succeedAfter 2 → 200', async () => {
      const r = await send('/no-codes', { mode: 'reset', succeedAfter: 2 });
      expect(r.status).toBe(200);
      expect(r.tries).toBe(3);
    });

    // Envoy answers a request it could not get a response for with 503 (upstream reset).
    it('GET reset, succeedAfter 4 → 503 after 3 retries', async () => {
      const r = await send('/no-codes', { mode: 'reset', succeedAfter: 4 });
      expect(r.status).toBe(503);
      expect(r.tries).toBe(4);
    });

    it('POST is not retried after a post-send reset', async () => {
      const r = await send('/no-codes', { mode: 'reset', succeedAfter: 1 }, ['-X', 'POST', '-d', 'order=1']);
      expect(r.status).toBe(503);
      expect(r.tries).toBe(1);
    });

    it('a 503 is not retried: no status code is added implicitly', async () => {
      const r = await send('/no-codes', { responseCode: 503, succeedAfter: 1 });
      expect(r.status).toBe(503);
      expect(r.tries).toBe(1);
    });
  });

  describe('timeouts', () => {
    // A budget's 504, timed by curl, on this 2-core machine shared with other work (load 3–4),
    // 15 samples per budget: 399.0–407.8 ms for 400 ms and 498.8–506.8 ms for 500 ms. Envoy arms
    // its timers from its event loop's cached clock, so one may fire a little early (curl's clock
    // starts before the budget, so it bounds it from below).
    const EARLY_MS = 10;
    // Late means scheduling delay, bounded by the backend's clock (budgetSpanMs). At load 16–19
    // (three busy loops per core beside other work), 120 spans of the 400 ms budget (all modes)
    // and 75 of the 500 ms one: the latest was 280 ms late; curl's clock, which also holds the
    // ext_proc exchange and curl's own start, saw up to 580 ms. Allowed at about twice the worst.
    const LATE_MS = 500;

    /**
     * From the first try's arrival at the backend to the end of the last: the budget starts
     * before the first try arrives, so this is at most the budget plus how late Envoy's timer
     * fired and the backend saw the cut.
     */
    function budgetSpanMs(seen: readonly Attempt[]): number {
      const last = seen.at(-1)!;
      return (last.endedAtMs ?? Number.POSITIVE_INFINITY) - seen[0]!.arrivedAtMs;
    }

    it('backendRequest 200ms, attempts 2, delayRetry 300ms: succeedAfter 2 → 200 (per-try timeouts retried)', async () => {
      const r = await send('/per-try', { succeedAfter: 2, delayRetry: '300ms' });
      expect(r.status).toBe(200);
      expect(r.tries).toBe(3);
    });

    it('backendRequest 200ms, attempts 2, delayRetry 300ms: succeedAfter 3 → 504', async () => {
      const r = await send('/per-try', { succeedAfter: 3, delayRetry: '300ms' });
      expect(r.status).toBe(504);
      expect(r.tries).toBe(3);
    });

    it('codes [500], attempts 5, backendRequest 200ms, request 400ms: succeedAfter 1 → 200', async () => {
      const r = await send('/budget', { responseCode: 500, succeedAfter: 1 });
      expect(r.status).toBe(200);
      expect(r.tries).toBe(2);
    });

    it('… succeedAfter 4 with delayRetry 100ms → 504 within the 400ms request budget', async () => {
      const held = filterCounter(await stack.envoy.stats(), 'steadfast_retry_held_total');
      const r = await send('/budget', { responseCode: 500, succeedAfter: 4, delayRetry: '100ms' });
      // The budget ended it while the tries went on: not a 500 (retries given up), not a 200.
      expect(r.status).toBe(504);
      expect(r.elapsedMs).toBeGreaterThanOrEqual(400 - EARLY_MS);
      const seen = await attempts(r.uuid);
      expect(budgetSpanMs(seen)).toBeLessThan(400 + LATE_MS);
      // How many tries fit is how long each took: its 100 ms delay plus the machine's scheduling.
      // A quiet machine fits 4; at load 16–19 the backend saw 2 to 4 (its timers up to 150 ms
      // late, a retry arriving up to 290 ms after the failure). So no count, but: no fifth try
      // (four failures take 4 × 100 ms, the whole budget: a fifth would begin after it)...
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen.length).toBeLessThanOrEqual(4);
      // ...and no retry waited for anything but its failure (this rule has no backoff floor).
      expect(filterCounter(await stack.envoy.stats(), 'steadfast_retry_held_total')).toBe(held);
    });

    it('request 500ms: a 1s response → 504 at the budget', async () => {
      const r = await send('/request-timeout', { delay: '1s' });
      expect(r.status).toBe(504);
      expect(r.elapsedMs).toBeGreaterThanOrEqual(500 - EARLY_MS);
      const seen = await attempts(r.uuid);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.outcome).toBe('aborted');
      expect(budgetSpanMs(seen)).toBeLessThan(500 + LATE_MS);
    });

    it('request 0s disables the timeout: a 1 s response is answered', async () => {
      const r = await send('/no-timeout', { delay: '1s' });
      expect(r.status).toBe(200);
      expect(r.elapsedMs).toBeGreaterThanOrEqual(1000);
    });
  });

  describe('backoff is a floor', () => {
    it('every gap between attempts seen at the backend is ≥ 200 ms over 50 requests', async () => {
      const gaps: number[] = [];
      // Both modes raise Envoy's 3 concurrent retries per cluster (attach-example.yaml's `app`
      // cluster, gateway mode's own: docs/retries.md). Attach mode sends 3 at a time: each
      // request also waits on an ext_proc exchange, answered on the same two cores.
      const parallel = isGatewayMode(mode) ? 10 : 3;
      const batches = Math.ceil(50 / parallel);
      for (let batch = 0; batch < batches; batch++) {
        const results = await sendAll(parallel, '/backoff', { responseCode: 500, succeedAfter: 2 });
        for (const r of results) {
          expect(r.status).toBe(200);
          const seen = await attempts(r.uuid);
          expect(seen).toHaveLength(3);
          for (let i = 1; i < seen.length; i++) {
            const prev = seen[i - 1]!;
            gaps.push(seen[i]!.arrivedAtMs - (prev.endedAtMs ?? prev.arrivedAtMs));
          }
        }
      }
      expect(gaps).toHaveLength(batches * parallel * 2);
      const sorted = [...gaps].sort((a, b) => a - b);
      const pct = (p: number): number =>
        sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
      const summary = {
        backoffMs: 200,
        gaps: sorted.length,
        minMs: +sorted[0]!.toFixed(2),
        p50Ms: +pct(50).toFixed(2),
        p90Ms: +pct(90).toFixed(2),
        p99Ms: +pct(99).toFixed(2),
        maxMs: +sorted.at(-1)!.toFixed(2),
      };
      // Kept for docs/retries.md: the measured distribution on this machine.
      mkdirSync(join(REPO_ROOT, 'tests/e2e/results'), { recursive: true });
      writeFileSync(
        join(REPO_ROOT, 'tests/e2e/results/backoff-gaps.json'),
        `${JSON.stringify(summary, null, 2)}\n`,
      );
      console.log(`${mode} mode: backoff floor 200 ms, gaps at the backend:`, summary);
      expect(sorted[0]).toBeGreaterThanOrEqual(200);
      const stats = await stack.envoy.stats();
      expect(filterCounter(stats, 'steadfast_retry_held_total')).toBeGreaterThanOrEqual(50);
    });
  });

  describe('what a client sends does not change the policy', () => {
    const hostile = [
      '-H',
      'x-envoy-max-retries: 10',
      '-H',
      'x-envoy-retry-on: 5xx',
      '-H',
      'x-envoy-retriable-status-codes: 503',
    ];

    it('x-envoy-retry-on: 5xx does not make a 503 retriable', async () => {
      const r = await send('/one-retry', { responseCode: 503, succeedAfter: 3 }, hostile);
      expect(r.status).toBe(503);
      expect(r.tries).toBe(1);
    });

    it('x-envoy-max-retries: 10 does not raise attempts', async () => {
      const r = await send('/one-retry', { responseCode: 500, succeedAfter: 5 }, hostile);
      expect(r.status).toBe(500);
      expect(r.tries).toBe(2);
    });

    it('without a retry stanza nothing is retried, whatever the client asks', async () => {
      const r = await send('/no-retry', { responseCode: 500, succeedAfter: 1 }, hostile);
      expect(r.status).toBe(500);
      expect(r.tries).toBe(1);
    });
  });
});

describe('GRPCRoute retry reasons (GEP-3440), via grpcurl, in gateway mode', () => {
  let grpc: GrpcGateway;

  beforeAll(async () => {
    grpc = await startGrpcGateway('retry: { reasons: [UNAVAILABLE], attempts: 2 }');
  });

  afterAll(async () => {
    await grpc?.stop();
  });

  const UNAVAILABLE = 14;
  const INTERNAL = 13;
  const METHOD = 'steadfast.test.v1.Echo/Echo';
  const gateway = (): string => grpc.address;

  async function triesOf(uuid: string): Promise<number> {
    const r = await grpcurlEcho(grpc.backendAddress, 'steadfast.test.v1.Echo/Attempts', { uuid });
    return (JSON.parse(r.stdout) as { count?: number }).count ?? 0;
  }

  it('reasons [unavailable], attempts 2: UNAVAILABLE twice then OK → OK', async () => {
    const uuid = randomUUID();
    const r = await grpcurlEcho(gateway(), METHOD, { uuid, succeed_after: 2, fail_code: UNAVAILABLE });
    expect(r.code).toBe('OK');
    expect(await triesOf(uuid)).toBe(3);
  });

  it('INTERNAL is not listed: not retried', async () => {
    const uuid = randomUUID();
    const r = await grpcurlEcho(gateway(), METHOD, { uuid, succeed_after: 1, fail_code: INTERNAL });
    expect(r.code).toBe('Internal');
    expect(await triesOf(uuid)).toBe(1);
  });

  it('attempts exhausted → the last status', async () => {
    const uuid = randomUUID();
    const r = await grpcurlEcho(gateway(), METHOD, { uuid, succeed_after: 5, fail_code: UNAVAILABLE });
    expect(r.code).toBe('Unavailable');
    expect(await triesOf(uuid)).toBe(3);
  });

  it('a status after the response started is not retried (Envoy sees grpc-status only in trailers-only responses)', async () => {
    const uuid = randomUUID();
    const r = await grpcurlEcho(gateway(), METHOD, {
      uuid,
      succeed_after: 1,
      fail_code: UNAVAILABLE,
      failure_shape: 'FAILURE_SHAPE_AFTER_HEADERS',
    });
    expect(r.code).toBe('Unavailable');
    expect(await triesOf(uuid)).toBe(1);
  });
});
