// Attach mode at 10,000 routes: a configuration generated into a temporary directory
// (route-i serves svc-i.example under /r/i with i % 5 + 1 retries) resolves correctly
// through Envoy and through /v1/resolve, and a reload of them all loses no answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyRoutes } from './support/attach-config.js';
import { type AttachStack, startAttachStack } from './support/attach-stack.js';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';

const ROUTES = 10_000;
let stack: AttachStack;

const expected = (i: number) =>
  new RegExp(`^sf1;id=httproute/default/route-${i}/rule/0;k=h;ra=${(i % 5) + 1};rc=503$`);

beforeAll(async () => {
  // Loading 10,000 routes takes seconds, more on a busy machine.
  // The answer cache off: every request asks ext_proc, so this measures the control service
  // at 10,000 routes (attach-answer-cache.test.ts tests the cache).
  stack = await startAttachStack({ routes: manyRoutes(ROUTES), readyTimeoutMs: 100_000, answerCache: false });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe(`attach mode with ${ROUTES} routes`, () => {
  it('compiled every route', async () => {
    const metrics = await (await fetch(`${stack.control.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^steadfast_config_matches ${ROUTES}$`, 'm'));
  });

  it('resolves sampled hosts through Envoy to their own rule', async () => {
    for (const i of [0, 1, 777, 4242, 5000, 9998, 9999]) {
      const s = await getOnce(`${stack.url}/r/${i}/item?x=1`, { host: `svc-${i}.example` });
      expect(s.status).toBe(200);
      expect(s.policy).toMatch(expected(i));
    }
    // The right host with another route's path, and an unknown host: no policy.
    expect((await getOnce(`${stack.url}/r/6`, { host: 'svc-5.example' })).policy).toBeUndefined();
    expect((await getOnce(`${stack.url}/r/5`, { host: 'svc-10000.example' })).policy).toBeUndefined();
  });

  it('answers /v1/resolve the same way', async () => {
    for (const i of [3, 6543, 9999]) {
      const q = new URLSearchParams({ host: `svc-${i}.example`, path: `/r/${i}/x` });
      const body = (await (await fetch(`${stack.control.adminUrl}/v1/resolve?${q}`)).json()) as {
        matched: boolean;
        token: string;
      };
      expect(body.matched).toBe(true);
      expect(body.token).toMatch(expected(i));
    }
  });

  it('keeps every request of a spread load on its own rule', async () => {
    // 300 requests over 1.5 s, to hosts spread over the table; each must get its own token.
    const hosts = Array.from({ length: 300 }, (_, k) => (k * 7919) % ROUTES);
    // In batches of 20 in flight: a burst of hundreds of new connections at once can push
    // some ext_proc answers past message_timeout on a small machine (they then fail open).
    for (let b = 0; b < hosts.length; b += 20) {
      const batch = hosts.slice(b, b + 20);
      const results = await Promise.all(
        batch.map((i) =>
          getOnce(`${stack.url}/r/${i}`, { host: `svc-${i}.example` }).then((s) => ({ i, s })),
        ),
      );
      for (const { i, s } of results) {
        expect(s.status).toBe(200);
        expect(s.policy).toMatch(expected(i));
      }
    }
    const resolves = async (): Promise<number> =>
      Number(
        /^steadfast_extproc_resolve_seconds_count (\S+)$/m.exec(
          await (await fetch(`${stack.control.adminUrl}/metrics`)).text(),
        )?.[1],
      );
    const before = await resolves();
    const load = startBoundedLoad({
      url: `${stack.url}/r/9876/z`,
      headers: { host: 'svc-9876.example' },
      ratePerSecond: 200,
      durationMs: 1000,
      maxRequests: 250,
    });
    const { failed, samples } = await load.done;
    expect(failed).toEqual([]);
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((s) => expected(9876).test(s.policy ?? ''))).toBe(true);
    // The answer cache is off: each request was resolved once by the service, no more, no less.
    // (How fast a resolve is at 10,000 routes is `npm run bench:resolve`'s to measure.)
    expect((await resolves()) - before).toBe(samples.length);
  }, 30_000);

  it('keeps answering with the previous table while a reload of all 10,000 routes compiles', async () => {
    const changed = manyRoutes(ROUTES).map((r, i) =>
      i === 9876 ? { ...r, rules: [{ path: `/r/${i}`, retry: { attempts: 7, codes: [502] } }] } : r,
    );
    stack.writeRoutes(changed);
    // 100 requests/s until the new rule shows (at most 30 s): none may fail.
    const load = startBoundedLoad({
      url: `${stack.url}/r/9876/z`,
      headers: { host: 'svc-9876.example' },
      ratePerSecond: 100,
      durationMs: 30_000,
      maxRequests: 3000,
      stopWhen: (s) => (s.policy ?? '').includes(';ra=7;rc=502'),
    });
    const { failed, samples } = await load.done;
    expect(failed).toEqual([]);
    const first = samples.find((s) => (s.policy ?? '').includes(';ra=7;rc=502'));
    expect(first).toBeDefined();
    // The configuration loads on a worker thread; the ext_proc thread stops only to take the
    // table and compile its resolver, then swaps in one step. So every request gets an answer
    // within message_timeout (0.2 s), from the previous table or the new one: none goes without.
    const previous = expected(9876);
    const next = /^sf1;id=httproute\/default\/route-9876\/rule\/0;k=h;ra=7;rc=502$/;
    const other = samples.filter((s) => !previous.test(s.policy ?? '') && !next.test(s.policy ?? ''));
    console.log(
      `attach-scale reload: new policy after ${first?.at.toFixed(0)} ms, ${samples.length} requests, ` +
        `${other.length} with neither table's policy`,
    );
    expect(other).toEqual([]);
  }, 60_000);
});
