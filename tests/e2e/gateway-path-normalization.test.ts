// Gateway mode as an edge proxy: routes match the normalized path (RFC 3986 dot segments
// resolved, `//` merged) and escaped slashes are unescaped and redirected, so a path never
// slips past its route to the wrong backend. Three Services behind /cart, /admin and /:
// each request reaches the backend its normalized path selects, with that path, or is
// redirected to the normalized path, or is rejected.
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { curl } from './support/curl.js';
import {
  ConfigDir,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';

type Outcome =
  /** Served by this backend, which saw this path. */
  | { readonly backend: 'cart' | 'admin' | 'web'; readonly path: string }
  /** Redirected (307) to this normalized path, which the routes then serve as usual. */
  | { readonly redirect: string; readonly then: 'cart' | 'admin' | 'web' }
  /** Refused by Envoy with this status. */
  | { readonly rejected: number };

const CASES: readonly (readonly [string, Outcome])[] = [
  ['/cart/item', { backend: 'cart', path: '/cart/item' }],
  ['/cart/../admin', { backend: 'admin', path: '/admin' }],
  ['/cart/../admin/users', { backend: 'admin', path: '/admin/users' }],
  ['/admin/../cart', { backend: 'cart', path: '/cart' }],
  ['/cart/./item', { backend: 'cart', path: '/cart/item' }],
  ['/../admin', { backend: 'admin', path: '/admin' }],
  ['/cart/../../admin', { backend: 'admin', path: '/admin' }],
  ['/cart/%2e%2e/admin', { backend: 'admin', path: '/admin' }],
  ['/cart/%2E%2E/admin', { backend: 'admin', path: '/admin' }],
  ['/cart/.%2e/admin', { backend: 'admin', path: '/admin' }],
  ['/cart/%2e/item', { backend: 'cart', path: '/cart/item' }],
  ['//admin', { backend: 'admin', path: '/admin' }],
  ['/cart//item', { backend: 'cart', path: '/cart/item' }],
  ['///cart///item', { backend: 'cart', path: '/cart/item' }],
  ['/cart%2F..%2Fadmin', { redirect: '/admin', then: 'admin' }],
  ['/cart%2f..%2fadmin', { redirect: '/admin', then: 'admin' }],
  ['/cart%2Fitem', { redirect: '/cart/item', then: 'cart' }],
  ['/admin%2F..%2Fcart', { redirect: '/cart', then: 'cart' }],
  ['/cart%5C..%5Cadmin', { redirect: '/admin', then: 'admin' }],
  ['/cart/%00/../admin', { rejected: 400 }],
  ['/cart/%zz/../admin', { backend: 'cart', path: '/cart/admin' }],
  // A servlet container would read `..;` as `..`: Envoy's normalization resolves it too.
  ['/cart/..;/admin', { backend: 'admin', path: '/admin' }],
  ['/cart/%2e%2e%2fadmin', { redirect: '/admin', then: 'admin' }],
  ['/cartx', { backend: 'web', path: '/cartx' }],
  ['/cart%2e%2e', { backend: 'web', path: '/cart..' }],
];

describe('gateway mode: path normalization before route matching', () => {
  const config = new ConfigDir();
  const backends: RunningBackend[] = [];
  let gateway: LocalGateway;

  beforeAll(async () => {
    for (const [name, address] of [
      ['cart', '127.0.0.2'],
      ['admin', '127.0.0.3'],
      ['web', '127.0.0.4'],
    ] as const) {
      backends.push(await startEchoBackend({ address, name }));
    }
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      ...backends.map((b) => serviceYaml(b.name, [b])),
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: paths }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      backendRefs: [{ name: cart, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /admin } }]
      backendRefs: [{ name: admin, port: 80 }]
    - backendRefs: [{ name: web, port: 80 }]
`,
    );
    gateway = await startTestGateway(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(backends.map((b) => b.close()));
    config.remove();
  });

  it.each(CASES)('%s', async (path, outcome) => {
    const url = gatewayUrl(gateway);
    // --path-as-is: curl would otherwise resolve the dot segments itself.
    const r = await curl(`${url}${path}`, ['--path-as-is']);
    const seen = (res: typeof r) => ({
      backend: res.headers.get('x-backend-instance')?.[0],
      path: res.status === 200 ? (JSON.parse(res.body) as { path: string }).path : undefined,
    });
    if ('backend' in outcome) {
      expect({ status: r.status, ...seen(r) }).toEqual({ status: 200, ...outcome });
    } else if ('redirect' in outcome) {
      expect(r.status).toBe(307);
      expect(r.headers.get('x-backend-instance')).toBeUndefined();
      expect(r.headers.get('location')?.[0]).toBe(outcome.redirect);
      const followed = await curl(`${url}${outcome.redirect}`);
      expect({ status: followed.status, ...seen(followed) }).toEqual({
        status: 200,
        backend: outcome.then,
        path: outcome.redirect,
      });
    } else {
      expect(r.status).toBe(outcome.rejected);
      expect(r.headers.get('x-backend-instance')).toBeUndefined();
    }
  });

  describe('the other edge defaults', () => {
    const echoed = async (args: string[]) => {
      const r = await curl(`${gatewayUrl(gateway)}/cart`, args);
      expect(r.status).toBe(200);
      return (JSON.parse(r.body) as { headers: Record<string, string[]> }).headers;
    };

    it('a header with an underscore is dropped, its dashed twin passes', async () => {
      const headers = await echoed(['-H', 'x_user: admin', '-H', 'x-user: alice']);
      expect(headers['x_user']).toBeUndefined();
      expect(headers['x-user']).toEqual(['alice']);
    });

    it("the client's own address and scheme win over what it claims", async () => {
      const headers = await echoed(['-H', 'x-forwarded-for: 203.0.113.9', '-H', 'x-forwarded-proto: https']);
      expect(headers['x-forwarded-proto']).toEqual(['http']);
      // Envoy appends the address the connection came from (for a loopback client, this
      // machine's own address): the client's claim is never the last, trusted entry.
      const xff = (headers['x-forwarded-for']?.[0] ?? '').split(',').map((x) => x.trim());
      expect(xff).toHaveLength(2);
      expect(xff[0]).toBe('203.0.113.9');
      const local = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
      expect(local).toContain(xff[1]);
    });

    it('more than 100 headers, or more than 60 KiB of them → 431, and the backend never sees it', async () => {
      const many = Array.from({ length: 101 }, (_, i) => ['-H', `x-h${i}: v`]).flat();
      const tooMany = await curl(`${gatewayUrl(gateway)}/cart`, many);
      expect(tooMany.status).toBe(431);
      expect(tooMany.headers.get('x-backend-instance')).toBeUndefined();
      const big = await curl(`${gatewayUrl(gateway)}/cart`, ['-H', `x-big: ${'a'.repeat(61 * 1024)}`]);
      expect(big.status).toBe(431);
      expect(big.headers.get('x-backend-instance')).toBeUndefined();
    });

    it('runs with the overload manager (heap limit and connection cap)', async () => {
      const stats = await gateway.envoy.stats();
      expect(stats.get('overload.envoy.overload_actions.stop_accepting_requests.active')).toBe(0);
      expect(stats.has('overload.envoy.resource_monitors.fixed_heap.pressure')).toBe(true);
    });
  });
});
