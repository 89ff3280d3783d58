// RequestRedirect and URLRewrite meet steadfast's own retries and sessions in gateway mode:
// a redirect is answered by Envoy's router — no backend sees it, nothing is retried, no
// session cookie is set, even on a rule that asks for retries and a session; a rewritten
// request is what every retry attempt sends (the router rewrites before the first
// attempt); a session behind a rewrite stays pinned to its backend; and a mirror gets one
// copy, never retried, whose answer changes neither the response nor the session; a CORS
// preflight is answered by Envoy (no backend, no retry, no cookie) while the rule's other
// requests keep their retries and session and gain the CORS headers. Only session rules run
// the filter at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptLedger } from '../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { exchange } from './conformance/exchange.js';
import {
  ConfigDir,
  GATEWAY_PORT,
  cookieOf,
  freePort,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /moved } }]
      filters: [{ type: RequestRedirect, requestRedirect: { hostname: example.org, statusCode: 307 } }]
      retry: { attempts: 3, codes: [500, 502, 503] }
      sessionPersistence: { sessionName: moved-session, type: Cookie }
    - matches: [{ path: { value: /secure } }]
      filters: [{ type: RequestRedirect, requestRedirect: { scheme: https, statusCode: 301 } }]
    - matches: [{ path: { value: /api } }]
      filters:
        - type: URLRewrite
          urlRewrite: { hostname: internal.example, path: { type: ReplacePrefixMatch, replacePrefixMatch: /v2 } }
      retry: { attempts: 2, codes: [503] }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { value: /pinned } }]
      filters: [{ type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /inner } } }]
      sessionPersistence: { sessionName: pinned-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { value: /mirrored } }]
      filters: [{ type: RequestMirror, requestMirror: { backendRef: { name: shadow, port: 80 } } }]
      retry: { attempts: 2, codes: [503] }
      sessionPersistence: { sessionName: mirrored-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { value: /cors } }]
      filters:
        - type: CORS
          cors: { allowOrigins: ['https://app.example'], allowMethods: [PUT], allowHeaders: ['*'], allowCredentials: true }
      retry: { attempts: 2, codes: [503] }
      sessionPersistence: { sessionName: cors-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { value: /mirror-dead } }]
      filters: [{ type: RequestMirror, requestMirror: { backendRef: { name: dead, port: 80 } } }]
      retry: { attempts: 2, codes: [503] }
      backendRefs: [{ name: app, port: 80 }]
`;

describe('gateway mode: redirects, rewrites, mirrors and CORS with retries and sessions', () => {
  const config = new ConfigDir();
  const ledger = new AttemptLedger();
  const shadowLedger = new AttemptLedger();
  let backends: RunningBackend[] = [];
  let shadow: RunningBackend;
  let gateway: LocalGateway;

  beforeAll(async () => {
    backends = await Promise.all(
      ['a', 'b', 'c'].map((n, i) =>
        startEchoBackend({ address: `127.0.0.${i + 2}`, name: `app-${n}`, ledger }),
      ),
    );
    config.write('gateway.yaml', gatewayYaml());
    shadow = await startEchoBackend({ address: '127.0.0.5', name: 'shadow', ledger: shadowLedger });
    // Nothing listens there: every copy sent to it fails to connect.
    const dead = { name: 'dead', address: '127.0.0.6', port: await freePort(), close: async () => undefined };
    config.write(
      'services.yaml',
      serviceYaml('app', backends),
      serviceYaml('shadow', [shadow]),
      serviceYaml('dead', [dead]),
    );
    config.write('routes.yaml', ROUTES);
    gateway = await startTestGateway(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([...backends, shadow].map((b) => b?.close()));
    config.remove();
  });

  it('answers a redirect itself: no backend attempt, no retry, no session cookie', async () => {
    const uuid = 'redirect-1';
    const res = await exchange(
      gatewayUrl(gateway),
      `/moved/cart?uuid=${uuid}&succeedAfter=3&responseCode=503`,
      'shop.example',
    );
    expect(res.status).toBe(307);
    // No scheme or port in the filter: the listener's (the Gateway's port, not where the test binds it).
    expect(res.headers['location']).toBe(
      `http://example.org:${GATEWAY_PORT}/moved/cart?uuid=${uuid}&succeedAfter=3&responseCode=503`,
    );
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(ledger.count(uuid)).toBe(0);
  });

  it("redirects to https on 443 whatever port the request's Host names, and passes Host on as sent", async () => {
    const plain = await exchange(gatewayUrl(gateway), '/secure/a?x=1', 'shop.example');
    expect(plain.status).toBe(301);
    expect(plain.headers['location']).toBe('https://shop.example/secure/a?x=1');
    // Envoy can only replace a port it was sent: it names 443 (upstream's tests accept it).
    const ported = await exchange(gatewayUrl(gateway), '/secure/a?x=1', 'shop.example:8080');
    expect(ported.status).toBe(301);
    expect(ported.headers['location']).toBe('https://shop.example:443/secure/a?x=1');
    const forwarded = await exchange(gatewayUrl(gateway), '/pinned/host', 'shop.example:1234');
    expect(forwarded.status).toBe(200);
    expect((JSON.parse(forwarded.body) as { host: string }).host).toBe('shop.example:1234');
  });

  it('sends the rewritten path and Host on every retry attempt', async () => {
    const uuid = 'rewrite-retry-1';
    const query = `uuid=${uuid}&succeedAfter=2&responseCode=503`;
    const res = await exchange(gatewayUrl(gateway), `/api/items?${query}`, 'shop.example');
    expect(res.status, res.body).toBe(200);
    const attempts = ledger.attempts(uuid);
    expect(attempts.map((a) => a.status)).toEqual([503, 503, 200]);
    for (const a of attempts) {
      expect(a.target).toBe(`/v2/items?${query}`);
      expect(a.host).toBe('internal.example');
    }
  });

  it('runs the filter only for session rules: retries alone, a redirect or no route never enter the VM', async () => {
    const entered = async (): Promise<number> =>
      (await gateway.envoy.stats()).get('wasmcustom.steadfast_requests_total') ?? 0;
    const before = await entered();
    expect((await exchange(gatewayUrl(gateway), '/api/no-vm', 'shop.example')).status).toBe(200);
    expect((await exchange(gatewayUrl(gateway), '/moved/no-vm', 'shop.example')).status).toBe(307);
    expect((await exchange(gatewayUrl(gateway), '/nowhere', 'shop.example')).status).toBe(404);
    expect(await entered()).toBe(before);
    const session = await exchange(gatewayUrl(gateway), '/pinned/vm', 'shop.example');
    expect(session.status).toBe(200);
    expect(cookieOf(session.headers['set-cookie'], 'pinned-session')).toBeDefined();
    expect(await entered()).toBe(before + 1);
  });

  it('keeps a session behind a rewrite pinned to its backend', async () => {
    const first = await exchange(gatewayUrl(gateway), '/pinned/a', 'shop.example');
    expect(first.status).toBe(200);
    const cookie = cookieOf(first.headers['set-cookie'], 'pinned-session');
    expect(cookie).toBeDefined();
    const pinned = (JSON.parse(first.body) as { instance: string }).instance;
    for (let i = 0; i < 12; i++) {
      const res = await exchange(gatewayUrl(gateway), `/pinned/n${i}`, 'shop.example', {
        cookie: cookie as string,
      });
      expect(res.status).toBe(200);
      const seen = JSON.parse(res.body) as { instance: string; path: string };
      expect(seen.instance).toBe(pinned);
      expect(seen.path).toBe(`/inner/n${i}`);
    }
    // Without the cookie, round robin spreads the same requests over all three.
    const spread = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await exchange(gatewayUrl(gateway), `/pinned/x${i}`, 'shop.example');
      spread.add((JSON.parse(res.body) as { instance: string }).instance);
    }
    expect(spread.size).toBeGreaterThan(1);
  });

  it('mirrors once: the copy is never retried, and its answer changes neither the response nor the session', async () => {
    const uuid = 'mirror-1';
    const query = `uuid=${uuid}&succeedAfter=2&responseCode=503`;
    const res = await exchange(gatewayUrl(gateway), `/mirrored/a?${query}`, 'shop.example');
    // The app answered on its third try; the shadow's 503 was dropped.
    expect(res.status, res.body).toBe(200);
    const served = (JSON.parse(res.body) as { instance: string }).instance;
    expect(served).toMatch(/^app-/);
    expect(ledger.attempts(uuid).map((a) => a.status)).toEqual([503, 503, 200]);
    const deadline = Date.now() + 10_000;
    while (shadowLedger.count(uuid) === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(shadowLedger.attempts(uuid).map((a) => a.status)).toEqual([503]);
    // The session names the backend that answered, not the shadow.
    const cookie = cookieOf(res.headers['set-cookie'], 'mirrored-session');
    expect(cookie).toBeDefined();
    for (let i = 0; i < 6; i++) {
      const next = await exchange(gatewayUrl(gateway), `/mirrored/b${i}`, 'shop.example', {
        cookie: cookie as string,
      });
      expect((JSON.parse(next.body) as { instance: string }).instance).toBe(served);
    }
    expect(shadowLedger.count(uuid)).toBe(1);
  });

  it('answers a CORS preflight itself: no backend attempt, no retry, no session cookie', async () => {
    const uuid = 'cors-preflight-1';
    const res = await exchange(
      gatewayUrl(gateway),
      `/cors/cart?uuid=${uuid}&succeedAfter=2&responseCode=503`,
      'shop.example',
      { origin: 'https://app.example', 'access-control-request-method': 'PUT' },
      'OPTIONS',
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(res.headers['access-control-allow-methods']).toBe('PUT');
    // allowHeaders '*' echoes what a preflight asks for; this one asks for none.
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(ledger.count(uuid)).toBe(0);
    const asking = await exchange(
      gatewayUrl(gateway),
      '/cors/cart',
      'shop.example',
      {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-token, content-type',
      },
      'OPTIONS',
    );
    expect(asking.status).toBe(204);
    expect(asking.headers['access-control-allow-headers']).toBe('x-token, content-type');
  });

  it('keeps retries and the session on the requests of a CORS rule, with the CORS headers', async () => {
    const uuid = 'cors-request-1';
    const res = await exchange(
      gatewayUrl(gateway),
      `/cors/cart?uuid=${uuid}&succeedAfter=2&responseCode=503`,
      'shop.example',
      { origin: 'https://app.example' },
      'PUT',
    );
    expect(res.status, res.body).toBe(200);
    expect(ledger.attempts(uuid).map((a) => a.status)).toEqual([503, 503, 200]);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['vary']).toBe('Origin');
    expect(cookieOf(res.headers['set-cookie'], 'cors-session')).toBeDefined();
  });

  it('answers as if there were no mirror when the mirror backend is down', async () => {
    const uuid = 'mirror-dead-1';
    const res = await exchange(gatewayUrl(gateway), `/mirror-dead/a?uuid=${uuid}`, 'shop.example');
    expect(res.status, res.body).toBe(200);
    expect(ledger.count(uuid)).toBe(1);
  });
});
