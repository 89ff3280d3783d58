// Attach mode's answer cache, end to end (docs/attach.md), with both filter builds: a
// request whose answer this Envoy worker already has skips ext_proc and gets the same
// policy; answers that depend on the query string are keyed on it, those of hosts whose
// rules read request headers on those headers' values; a configuration change reaches
// every request within the documented bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_BUILDS, filterCounter } from '../support/filter-builds.js';
import { type AttachStack, startAttachStack, within } from './support/attach-stack.js';
import { curl } from './support/curl.js';
import { POLICY_HEADER, type PolicyStack, answeredInTime } from './support/with-policy.js';

/** The staleness bound docs/attach.md promises: a reload applies within this. */
const STALENESS_BOUND_MS = 1000;
/** How long a stored answer is fresh (the filter's default answerCacheTtlMs). */
const ANSWER_TTL_MS = 400;

function routes(attempts: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['shop.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: ${attempts}, codes: [503] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: search, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['search.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: /find }, queryParams: [{ name: v, value: '1' }] }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: 1 }
    - matches: [{ path: { type: PathPrefix, value: /find } }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: 2 }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: beta, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['beta.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: / }, headers: [{ name: x-beta, value: 'on' }] }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: 3 }
`;
}

let stack: AttachStack;
/** The stack as support/with-policy.ts reads it. */
let attached: PolicyStack;

async function stat(name: string): Promise<number> {
  return (await stack.envoy.stats()).get(name) ?? 0;
}
async function hits(): Promise<number> {
  return filterCounter(await stack.envoy.stats(), HITS);
}
const STREAMS = 'http.ingress.ext_proc.streams_started';
const HITS = 'steadfast_answer_cache_hit_total';

/**
 * One request: its status, the policy the filter applied, and whether it asked ext_proc. One
 * whose ext_proc answer came too late went on without any (and left nothing in the cache), and
 * is sent again (support/with-policy.ts).
 */
function request(
  path: string,
  host: string,
  headers: readonly string[] = [],
): Promise<{ status: number; policy: string | undefined; askedExtProc: boolean }> {
  return answeredInTime(attached, async () => {
    const before = await stat(STREAMS);
    const res = await curl(`${stack.url}${path}`, [
      '-H',
      `Host: ${host}`,
      ...headers.flatMap((h) => ['-H', h]),
    ]);
    const after = await stat(STREAMS);
    return {
      status: res.status,
      policy: res.headers.get(POLICY_HEADER)?.[0],
      askedExtProc: after > before,
    };
  });
}

async function resolved(
  host: string,
  path: string,
  headers: readonly string[] = [],
): Promise<string | undefined> {
  const q = new URLSearchParams({ host, path, method: 'GET' });
  for (const h of headers) q.append('header', h);
  const answer = (await (await fetch(`${stack.control.adminUrl}/v1/resolve?${q}`)).json()) as {
    token?: string;
  };
  return answer.token;
}

describe.each(FILTER_BUILDS)('attach mode with the %s filter: the answer cache', (build) => {
  beforeAll(async () => {
    // One Envoy worker: the cache is per worker, so every request meets the same one.
    stack = await startAttachStack({
      routes: routes(2),
      envoyArgs: ['--concurrency', '1'],
      answerCache: process.env.NOCACHE ? false : true,
      build,
    });
    attached = { mode: build === 'native' ? 'attach-native' : 'attach', envoy: stack.envoy };
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers a repeated request from the cache: ext_proc is skipped, the policy is the same', async () => {
    const first = await request('/cart/1', 'shop.example');
    expect(first.status).toBe(200);
    expect(first.policy).toBe(await resolved('shop.example', '/cart/1'));
    const hitsBefore = await hits();
    const second = await request('/cart/1', 'shop.example:8080');
    expect(second).toEqual({ status: 200, policy: first.policy, askedExtProc: false });
    expect(await hits()).toBe(hitsBefore + 1);
    // Another path is another key: asked.
    expect((await request('/cart/2', 'shop.example')).askedExtProc).toBe(true);
  });

  it('reuses "no rule matches" too', async () => {
    expect(await request('/nothing', 'other.example')).toMatchObject({
      policy: undefined,
      askedExtProc: true,
    });
    expect(await request('/nothing', 'other.example')).toEqual({
      status: 200,
      policy: undefined,
      askedExtProc: false,
    });
  });

  it("keys on the query string where the host's rules read query parameters", async () => {
    for (const path of ['/find?v=1', '/find?v=2', '/find']) {
      const want = await resolved('search.example', path);
      expect(want).toBeDefined();
      const fresh = await request(path, 'search.example');
      expect(fresh.policy).toBe(want);
      expect(await request(path, 'search.example')).toMatchObject({ policy: want, askedExtProc: false });
    }
    expect(await resolved('search.example', '/find?v=1')).not.toBe(
      await resolved('search.example', '/find?v=2'),
    );
  });

  it("answers a host whose rules read a request header from the cache, keyed on that header's values", async () => {
    const variants: Array<Array<[string, string]>> = [
      [['x-beta', 'on']],
      [['x-beta', 'off']],
      [],
      [
        ['x-beta', 'on'],
        ['x-beta', 'on'],
      ],
      [['x-beta', '']],
    ];
    // curl sends an empty header as `name;` (`name:` would remove it).
    const curlHeaders = (v: Array<[string, string]>) =>
      v.map(([k, x]) => (x === '' ? `${k};` : `${k}: ${x}`));
    const wants = await Promise.all(
      variants.map((v) =>
        resolved(
          'beta.example',
          '/b',
          v.map(([k, x]) => `${k}:${x}`),
        ),
      ),
    );
    expect(wants[0]).toMatch(/^sf1;id=httproute\/default\/beta\/rule\/0;/);
    expect(wants.slice(1)).toEqual([undefined, undefined, undefined, undefined]);
    /** When each variant's last request that asked ext_proc began: its answer is stored from then on. */
    const askedAt = new Map<number, number>();
    let surelyFresh = 0;
    for (let round = 0; round < 12; round++) {
      // Interleaved: each round starts at another variant, and its last one comes twice in a row.
      const order = variants.map((_, k) => (round + k) % variants.length);
      order.push(order[order.length - 1] as number);
      for (const i of order) {
        const began = performance.now();
        const res = await request('/b', 'beta.example', curlHeaders(variants[i] as Array<[string, string]>));
        const ended = performance.now();
        const what = `${build} round ${round}: ${JSON.stringify(variants[i])}`;
        expect(res.status).toBe(200);
        expect(res.policy, what).toBe(wants[i]);
        const stored = askedAt.get(i);
        // Asked and answered within the answer's freshness: it must have come from the cache.
        if (stored !== undefined && ended - stored < ANSWER_TTL_MS) {
          surelyFresh++;
          expect(res.askedExtProc, what).toBe(false);
        }
        if (res.askedExtProc) askedAt.set(i, began);
      }
    }
    // Not vacuous: requests to the header-matching host skipped ext_proc.
    expect(surelyFresh).toBeGreaterThan(0);
  });

  it('cannot be steered by a client: a request naming the filter state still asks ext_proc', async () => {
    const token = await resolved('shop.example', '/cart/1');
    const res = await request('/cart/forged', 'shop.example', [
      `wasm.steadfast_answer: ${token}`,
      `x-steadfast-answer: ${token}`,
    ]);
    expect(res.askedExtProc).toBe(true);
  });

  it(`applies a configuration change within ${STALENESS_BOUND_MS} ms`, async () => {
    const before = await request('/cart/stale', 'shop.example');
    expect((await request('/cart/stale', 'shop.example')).askedExtProc).toBe(false);
    stack.writeRoutes(routes(4));
    let want: string | undefined;
    await within(
      10_000,
      async () => {
        want = await resolved('shop.example', '/cart/stale');
        return want !== before.policy;
      },
      10,
    );
    // From the moment the control service answers with the new configuration.
    const reloaded = performance.now();
    expect(want).toMatch(/;ra=4;/);
    for (;;) {
      const res = await request('/cart/stale', 'shop.example');
      if (res.policy === want) break;
      expect(res.policy).toBe(before.policy);
      expect(performance.now() - reloaded).toBeLessThan(STALENESS_BOUND_MS);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(performance.now() - reloaded).toBeLessThan(STALENESS_BOUND_MS);
  });
});

describe('attach mode: the answer cache turned off', () => {
  let off: AttachStack;
  beforeAll(async () => {
    off = await startAttachStack({
      routes: routes(2),
      envoyArgs: ['--concurrency', '1'],
      answerCache: false,
    });
  }, 60_000);
  afterAll(async () => {
    await off?.stop();
  });

  it('asks ext_proc for every request, and applies the same policy', async () => {
    const streams = async () => (await off.envoy.stats()).get(STREAMS) ?? 0;
    const policies: Array<string | undefined> = [];
    for (let i = 0; i < 3; i++) {
      const [res, asked] = await answeredInTime({ mode: 'attach-uncached', envoy: off.envoy }, async () => {
        const before = await streams();
        const r = await curl(`${off.url}/cart/1`, ['-H', 'Host: shop.example']);
        return [r, (await streams()) - before] as const;
      });
      expect(asked).toBe(1);
      policies.push(res.headers.get(POLICY_HEADER)?.[0]);
    }
    expect(policies[0]).toMatch(/^sf1;id=httproute\/default\/shop\/rule\/0;/);
    expect(new Set(policies).size).toBe(1);
    expect((await off.envoy.stats()).get(HITS) ?? 0).toBe(0);
  });
});
