// Session persistence (GEP-1619) in both modes, from Gateway API objects: the cookie's
// attributes and lifetimes, the gateway-tracked absolute and idle timeouts, the Header
// type, and separate sessions for two rules to the same Service. Three backends on
// 127.0.0.2–4 sit behind one Service, so a session that is not kept shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curl, type CurlResponse } from './support/curl.js';
import { type GrpcGateway, startGrpcGateway } from './support/grpc-gateway.js';
import { grpcurlEcho } from './support/grpcurl.js';
import { MODES, type ModeStack, startMode } from './support/mode-stack.js';
import { POLICY_HEADER, oneWithPolicy } from './support/with-policy.js';

const rule = (
  path: string,
  session: string,
): string => `    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      sessionPersistence: ${session}
      backendRefs: [{ name: app, port: 80 }]`;

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
${[
  rule('/cart', '{ sessionName: shop-session, type: Cookie }'),
  rule('/perm', '{ sessionName: perm, absoluteTimeout: 5m, cookieConfig: { lifetimeType: Permanent } }'),
  rule('/short', '{ sessionName: short, absoluteTimeout: 2s }'),
  rule('/idle', '{ sessionName: idle, idleTimeout: 2s }'),
  rule('/hdr', '{ sessionName: x-session, type: Header }'),
  rule('/two-a', '{ type: Cookie }'),
  rule('/two-b', '{ type: Cookie }'),
].join('\n')}
`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const instance = (r: CurlResponse): string => r.headers.get('x-backend-instance')?.[0] ?? '';

/** The `name=value` Set-Cookie the gateway issued, as [name, value, attributes]. */
function issued(r: CurlResponse): [string, string, string] | undefined {
  for (const c of r.headers.get('set-cookie') ?? []) {
    const m = /^([^=]+)=([\w-]{86})(;.*)?$/.exec(c);
    if (m) return [m[1]!, m[2]!, m[3] ?? ''];
  }
  return undefined;
}

describe.each(MODES)('%s mode', (mode) => {
  let stack: ModeStack;
  // Each exchange with its rule's policy: in attach mode one whose ext_proc answer came too
  // late went on without it (no session), and is sent again (support/with-policy.ts).
  const get = (path: string, args: string[] = []): Promise<CurlResponse> =>
    oneWithPolicy(
      stack,
      () => curl(`${stack.url}${path}`, args),
      (r) => r.headers.has(POLICY_HEADER),
    );

  beforeAll(async () => {
    stack = await startMode(mode, ROUTES);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('the first response sets the cookie with its attributes; 50 requests with it stay on one backend', async () => {
    const first = await get('/cart');
    expect(first.status).toBe(200);
    const [name, token, attributes] = issued(first)!;
    expect(name).toBe('shop-session');
    expect(attributes).toBe('; Path=/; HttpOnly; SameSite=Strict');
    for (let i = 0; i < 50; i++) {
      const r = await get('/cart', ['-H', `cookie: ${name}=${token}`]);
      expect(instance(r)).toBe(instance(first));
      expect(issued(r)).toBeUndefined();
    }
  });

  it('the pin header reaches neither the backend nor the client, new or resumed', async () => {
    const first = await get('/cart');
    const [name, token] = issued(first)!;
    const resumed = await get('/cart', ['-H', `cookie: ${name}=${token}`]);
    for (const r of [first, resumed]) {
      expect(r.status).toBe(200);
      expect(r.headers.get('x-steadfast-pin')).toBeUndefined();
      const seen = (JSON.parse(r.body) as { headers: Record<string, string[]> }).headers;
      expect(Object.keys(seen)).not.toContain('x-steadfast-pin');
    }
    expect(instance(resumed)).toBe(instance(first));
  });

  it('new clients are spread over the backends', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add(instance(await get('/cart')));
    expect(seen.size).toBe(3);
  });

  it('Permanent with absoluteTimeout 5m → Max-Age=300', async () => {
    expect(issued(await get('/perm'))![2]).toBe('; Path=/; HttpOnly; SameSite=Strict; Max-Age=300');
  });

  it('a Session cookie has no Max-Age or Expires, yet is refused after its absoluteTimeout', async () => {
    const first = await get('/short');
    const [name, token, attributes] = issued(first)!;
    expect(attributes).not.toMatch(/Max-Age|Expires/);
    expect(issued(await get('/short', ['-H', `cookie: ${name}=${token}`]))).toBeUndefined();
    await sleep(2100);
    const late = await get('/short', ['-H', `cookie: ${name}=${token}`]);
    expect(late.status).toBe(200);
    expect(issued(late)).toBeDefined();
  });

  it('idleTimeout 2s: used every second for 6 s → same backend; idle 3 s → a new session', async () => {
    const first = await get('/idle');
    let [name, token] = issued(first)!;
    let renewals = 0;
    let last = performance.now();
    for (let t = 0; t < 6; t++) {
      await sleep(1000);
      const sent = performance.now();
      const r = await get('/idle', ['-H', `cookie: ${name}=${token}`]);
      // Should it fail: was the use late (past the 2 s idle timeout), or did it go without policy?
      const why = `use ${t}, ${Math.round(sent - last)} ms after the last, policy ${r.headers.get(POLICY_HEADER)?.[0] ?? 'none'}`;
      last = sent;
      expect(instance(r), why).toBe(instance(first));
      // Each use slides the session forward with a renewed token.
      const renewed = issued(r);
      if (renewed) {
        [name, token] = renewed;
        renewals++;
      }
    }
    // Uses more than a second apart each move lastUsed, so (almost) every one renews.
    expect(renewals).toBeGreaterThanOrEqual(5);
    await sleep(3000);
    const expired = async () =>
      (await stack.envoy.stats()).get('wasmcustom.steadfast_session_expired_total') ?? 0;
    const before = await expired();
    const idle = await get('/idle', ['-H', `cookie: ${name}=${token}`]);
    expect(issued(idle)).toBeDefined();
    expect(await expired()).toBe(before + 1);
  }, 20_000);

  it('Header type: the response carries the session header, and sending it back keeps the backend', async () => {
    const first = await get('/hdr');
    const token = first.headers.get('x-session')?.[0];
    expect(token).toMatch(/^[\w-]{86}$/);
    expect(first.headers.get('set-cookie')).toBeUndefined();
    for (let i = 0; i < 10; i++) {
      expect(instance(await get('/hdr', ['-H', `x-session: ${token}`]))).toBe(instance(first));
    }
  });

  it('two rules to the same Service keep separate sessions', async () => {
    const a = issued(await get('/two-a'))!;
    const b = issued(await get('/two-b'))!;
    expect(a[0]).not.toBe(b[0]);
    // Rule B does not accept rule A's token even under its own name: the token is bound to its rule.
    const crossed = await get('/two-b', ['-H', `cookie: ${b[0]}=${a[1]}`]);
    expect(issued(crossed)).toBeDefined();
  });

  it('forged and oversized cookies start a new session, never a 5xx', async () => {
    const [name, token] = issued(await get('/cart'))!;
    for (const cookie of [`${name}=${token.slice(0, 85)}B`, `${name}=${'A'.repeat(8192)}`]) {
      const r = await get('/cart', ['-H', `cookie: ${cookie}`]);
      expect(r.status).toBe(200);
      expect(issued(r)).toBeDefined();
    }
  });

  it('a duplicated session cookie keeps the session: the first valid token wins, garbage beside it is ignored', async () => {
    const first = await get('/cart');
    const [name, token] = issued(first)!;
    for (const cookie of [
      `${name}=${token}; ${name}=${token}`,
      `${name}=${'A'.repeat(86)}; ${name}=${token}`,
      `${name}=${token}; ${name}=garbage`,
    ]) {
      const r = await get('/cart', ['-H', `cookie: ${cookie}`]);
      expect(r.status).toBe(200);
      expect(instance(r)).toBe(instance(first));
      expect(issued(r)).toBeUndefined();
    }
  });

  it.each([
    ['HTTP/1.1 with two Cookie headers', ['--http1.1']],
    ['HTTP/2 with the cookie split into several header fields', ['--http2-prior-knowledge']],
  ])('a session cookie in any Cookie header keeps the session (%s)', async (_what, protocol) => {
    const first = await get('/cart');
    const [name, token] = issued(first)!;
    for (const cookies of [
      ['other=1', `${name}=${token}`],
      [`${name}=garbage`, `a=b; ${name}=${token}`],
      [`${name}=${'A'.repeat(86)}`, 'x=1', `${name}=${token}`],
    ]) {
      const r = await get('/cart', [...protocol, ...cookies.flatMap((c) => ['-H', `cookie: ${c}`])]);
      expect(r.status).toBe(200);
      expect(instance(r)).toBe(instance(first));
      expect(issued(r)).toBeUndefined();
    }
  });
});

describe('Header type over gRPC (gateway mode), with grpcurl', () => {
  let grpc: GrpcGateway;

  beforeAll(async () => {
    grpc = await startGrpcGateway('sessionPersistence: { sessionName: x-grpc-session, type: Header }');
  });

  afterAll(async () => {
    await grpc?.stop();
  });

  /** The "Response headers received" part of grpcurl -v output. */
  const responseHeaders = (stdout: string): string =>
    /Response headers received:\n([\s\S]*?)\n\n/.exec(stdout)?.[1] ?? '';

  it('the response metadata carries the session, and sending it back keeps the session', async () => {
    const first = await grpcurlEcho(grpc.address, 'steadfast.test.v1.Echo/Echo', { message: 'hi' }, ['-v']);
    expect(first.code).toBe('OK');
    const token = /x-grpc-session: ([\w-]{86})/.exec(responseHeaders(first.stdout))?.[1];
    expect(token).toBeDefined();
    const resumed = async () =>
      (await grpc.gateway.envoy.stats()).get('wasmcustom.steadfast_session_resumed_total') ?? 0;
    const before = await resumed();
    const again = await grpcurlEcho(grpc.address, 'steadfast.test.v1.Echo/Echo', { message: 'hi' }, [
      '-v',
      '-H',
      `x-grpc-session: ${token}`,
    ]);
    expect(again.code).toBe('OK');
    // A kept session is not re-issued.
    expect(responseHeaders(again.stdout)).toContain('content-type');
    expect(responseHeaders(again.stdout)).not.toContain('x-grpc-session:');
    expect(await resumed()).toBe(before + 1);
  });
});
