// Session persistence in the filter (GEP-1619 as docs/session-persistence.md decides it), in the emulator
// with a controlled clock: issuing, resuming, renewing and refusing sealed tokens, the
// cookie attributes, and the host pin handed to Envoy's stateful_session filter.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Policy, SessionPolicy } from '../../extproc/src/policy/policy.js';
import { encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import { openSessionToken, sealSessionToken } from '../support/session-token.js';
import { propertyKey, type HttpStream, type ProxyWasmHost } from '../emulator/proxy-wasm-host.js';
import { METADATA_POLICY, startedHost } from './filter-harness.js';

const KEY = randomBytes(32);
const OLD_KEY = randomBytes(32);
const RULE = 'httproute/default/shop/rule/0';
const UPSTREAM = propertyKey('upstream', 'address');
const TLS = propertyKey('connection', 'tls_version');
const T0 = 1_800_000_000;

function policy(session: Partial<SessionPolicy> = {}, rule = RULE): Policy {
  return {
    rule,
    kind: 'http',
    session: { type: 'cookie', name: 'shop-session', path: '/', lifetime: 'session', ...session },
  };
}

interface Gateway {
  host: ProxyWasmHost;
  setNow(seconds: number): void;
  /** One request through the filter, served by `servedBy`. */
  request(
    p: Policy,
    headers?: Array<[string, string]>,
    servedBy?: string | null,
    props?: Record<string, string>,
  ): HttpStream;
}

async function gateway(keys: Buffer[] = [KEY]): Promise<Gateway> {
  let now = BigInt(T0) * 1_000_000_000n;
  const host = await startedHost({
    pluginConfig: JSON.stringify({ sessionKeys: keys.map((k) => k.toString('base64')) }),
    now: () => now,
  });
  return {
    host,
    setNow: (s) => (now = BigInt(Math.round(s * 1000)) * 1_000_000n),
    request(p, headers = [], servedBy = '127.0.0.2:8080', props = {}) {
      const s = host.newStream({ [METADATA_POLICY]: encodePolicyToken(p), ...props });
      s.sendRequestHeaders([[':method', 'GET'], [':path', '/'], [':authority', 'shop.example'], ...headers]);
      if (servedBy !== null) s.setProperty(UPSTREAM, servedBy);
      // What stateful_session adds on the way back; the filter must remove it.
      s.sendResponseHeaders([
        [':status', '200'],
        ['x-steadfast-pin', 'MTI3LjAuMC4yOjgwODA='],
      ]);
      s.complete();
      return s;
    },
  };
}

function cookieOf(s: HttpStream): string {
  const set = s.responseHeaderValues('set-cookie');
  expect(set).toHaveLength(1);
  return set[0]!;
}

function tokenOf(setCookie: string): string {
  return /^shop-session=([^;]+);/.exec(setCookie)![1]!;
}

const pinOf = (endpoint: string): string => Buffer.from(endpoint).toString('base64');

describe('a new session', () => {
  it('starts with a sealed cookie carrying the attributes docs/session-persistence.md lists', async () => {
    const g = await gateway();
    const s = g.request(policy());
    const cookie = cookieOf(s);
    expect(cookie).toMatch(/^shop-session=[A-Za-z0-9_-]{86}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(g.host.metric('steadfast_session_created_total')).toBe(1n);
    // The token names the backend that served the request — readable only with the key.
    const opened = openSessionToken(tokenOf(cookie), [KEY], RULE, T0);
    expect(opened).toMatchObject({
      ok: true,
      endpoint: '127.0.0.2:8080',
      issuedAtS: T0,
      lastUsedS: T0,
      expiresAtS: 0,
    });
    expect(cookie).not.toContain('127.0.0.2');
    // The served host never leaks to the client through stateful_session's header.
    expect(s.responseHeader('x-steadfast-pin')).toBeUndefined();
  });

  it('uses the configured path and name', async () => {
    const g = await gateway();
    const s = g.request(policy({ path: '/cart', name: 'cart' }));
    expect(s.responseHeaderValues('set-cookie')[0]).toMatch(
      /^cart=[\w-]{86}; Path=\/cart; HttpOnly; SameSite=Strict$/,
    );
  });

  it('is Secure on a TLS connection and behind a trusted x-forwarded-proto: https', async () => {
    const g = await gateway();
    expect(cookieOf(g.request(policy(), [], '127.0.0.2:8080', { [TLS]: 'TLSv1.3' }))).toMatch(/; Secure$/);
    expect(cookieOf(g.request(policy(), [['x-forwarded-proto', 'https']]))).toMatch(/; Secure$/);
    expect(cookieOf(g.request(policy(), [['x-forwarded-proto', 'http']]))).not.toContain('Secure');
  });

  it('Permanent with absoluteTimeout 5m → Max-Age=300; Session → neither Max-Age nor Expires', async () => {
    const g = await gateway();
    expect(cookieOf(g.request(policy({ lifetime: 'permanent', absoluteTimeoutS: 300 })))).toMatch(
      /; Max-Age=300$/,
    );
    const session = cookieOf(g.request(policy({ lifetime: 'session', absoluteTimeoutS: 300 })));
    expect(session).not.toMatch(/Max-Age|Expires/);
    // The gateway still enforces the absolute timeout: it lives inside the token.
    expect(openSessionToken(tokenOf(session), [KEY], RULE, T0)).toMatchObject({
      ok: true,
      expiresAtS: T0 + 300,
    });
  });

  it('starts no session on a local reply (no upstream host)', async () => {
    const g = await gateway();
    const s = g.request(policy(), [], null);
    expect(s.responseHeaderValues('set-cookie')).toEqual([]);
  });

  it('keeps the backend’s own Set-Cookie headers', async () => {
    const g = await gateway();
    const s = g.host.newStream({ [METADATA_POLICY]: encodePolicyToken(policy()) });
    s.sendRequestHeaders([
      [':method', 'GET'],
      [':path', '/'],
    ]);
    s.setProperty(UPSTREAM, '127.0.0.2:8080');
    s.sendResponseHeaders([
      [':status', '200'],
      ['set-cookie', 'app=1'],
    ]);
    expect(s.responseHeaderValues('set-cookie')).toHaveLength(2);
    expect(s.responseHeaderValues('set-cookie')[0]).toBe('app=1');
  });
});

describe('an established session', () => {
  it('pins the request to its backend and issues no new cookie', async () => {
    const g = await gateway();
    const token = tokenOf(cookieOf(g.request(policy())));
    g.setNow(T0 + 10);
    const s = g.request(policy(), [['cookie', `other=1; shop-session=${token}; x=y`]]);
    expect(s.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
    expect(s.responseHeaderValues('set-cookie')).toEqual([]);
    expect(g.host.metric('steadfast_session_resumed_total')).toBe(1n);
  });

  it('is pinned through the header type too, and answered in that header', async () => {
    const g = await gateway();
    const p = policy({ type: 'header', name: 'x-session' });
    const first = g.request(p);
    const token = first.responseHeader('x-session')!;
    expect(token).toMatch(/^[\w-]{86}$/);
    expect(first.responseHeaderValues('set-cookie')).toEqual([]);
    const again = g.request(p, [['x-session', token]]);
    expect(again.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
  });

  it('moves when another backend served it (the pinned one was gone), with a new token', async () => {
    const g = await gateway();
    const token = tokenOf(cookieOf(g.request(policy())));
    const s = g.request(policy(), [['cookie', `shop-session=${token}`]], '127.0.0.3:8080');
    const moved = openSessionToken(tokenOf(cookieOf(s)), [KEY], RULE, T0);
    expect(moved).toMatchObject({ ok: true, endpoint: '127.0.0.3:8080' });
    expect(g.host.metric('steadfast_session_moved_total')).toBe(1n);
  });

  it('allows one retry elsewhere when the pinned backend cannot be reached, even without a retry stanza', async () => {
    const g = await gateway();
    const token = tokenOf(cookieOf(g.request(policy())));
    const s = g.request(policy(), [['cookie', `shop-session=${token}`]]);
    // GET is idempotent: a reset after sending (a dead backend's pooled connection) moves it too.
    expect(s.requestHeader('x-envoy-retry-on')).toBe(
      'connect-failure,refused-stream,reset-before-request,reset',
    );
    expect(s.requestHeader('x-envoy-max-retries')).toBe('1');
    const post = g.host.newStream({ [METADATA_POLICY]: encodePolicyToken(policy()) });
    post.sendRequestHeaders([
      [':method', 'POST'],
      [':path', '/'],
      ['cookie', `shop-session=${token}`],
    ]);
    expect(post.requestHeader('x-envoy-retry-on')).toBe(
      'connect-failure,refused-stream,reset-before-request',
    );
    const fresh = g.request(policy());
    expect(fresh.requestHeader('x-envoy-max-retries')).toBe('0');
  });

  it('is refused after its absolute timeout, even with the Session lifetime', async () => {
    const g = await gateway();
    const p = policy({ absoluteTimeoutS: 5 });
    const token = tokenOf(cookieOf(g.request(p)));
    g.setNow(T0 + 4);
    expect(
      g.request(p, [['cookie', `shop-session=${token}`]]).requestHeader('x-steadfast-pin'),
    ).toBeDefined();
    g.setNow(T0 + 5);
    const late = g.request(p, [['cookie', `shop-session=${token}`]]);
    expect(late.requestHeader('x-steadfast-pin')).toBeUndefined();
    expect(g.host.metric('steadfast_session_expired_total')).toBe(1n);
    expect(late.responseHeaderValues('set-cookie')).toHaveLength(1);
  });

  it('slides with idleTimeout: each use renews it; idle too long starts a new one', async () => {
    const g = await gateway();
    const p = policy({ idleTimeoutS: 2 });
    let token = tokenOf(cookieOf(g.request(p)));
    for (let t = 1; t <= 6; t++) {
      g.setNow(T0 + t);
      const s = g.request(p, [['cookie', `shop-session=${token}`]]);
      expect(s.requestHeader('x-steadfast-pin'), `second ${t}`).toBe(pinOf('127.0.0.2:8080'));
      token = tokenOf(cookieOf(s));
      expect(openSessionToken(token, [KEY], RULE, T0 + t)).toMatchObject({
        ok: true,
        issuedAtS: T0,
        lastUsedS: T0 + t,
      });
    }
    expect(g.host.metric('steadfast_session_renewed_total')).toBe(6n);
    // Whole seconds: exactly the timeout apart is still alive (uses 1.01 s apart can read as 2 s).
    g.setNow(T0 + 8);
    const edge = g.request(p, [['cookie', `shop-session=${token}`]]);
    expect(edge.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
    token = tokenOf(cookieOf(edge));
    g.setNow(T0 + 11);
    const idle = g.request(p, [['cookie', `shop-session=${token}`]]);
    expect(idle.requestHeader('x-steadfast-pin')).toBeUndefined();
    expect(g.host.metric('steadfast_session_expired_total')).toBe(1n);
  });

  it('is renewed at most once a second', async () => {
    const g = await gateway();
    const p = policy({ idleTimeoutS: 60 });
    const token = tokenOf(cookieOf(g.request(p)));
    const same = g.request(p, [['cookie', `shop-session=${token}`]]);
    expect(same.responseHeaderValues('set-cookie')).toEqual([]);
  });
});

describe('bad tokens are no session: a new backend, a new token, never an error', () => {
  async function refused(cookie: string | ((valid: string) => string), rule = RULE, keys = [KEY]) {
    const g = await gateway(keys);
    const valid = tokenOf(cookieOf(g.request(policy())));
    const header = typeof cookie === 'function' ? cookie(valid) : cookie;
    const s = g.request(policy({}, rule), [['cookie', header]]);
    expect(s.requestHeader('x-steadfast-pin')).toBeUndefined();
    expect(s.responseHeaderValues('set-cookie')).toHaveLength(1);
    return g;
  }

  it.each([
    [
      'forged (one character changed)',
      (v: string) => `shop-session=${v.slice(0, 40)}${v[40] === 'A' ? 'B' : 'A'}${v.slice(41)}`,
    ],
    ['truncated', (v: string) => `shop-session=${v.slice(0, 60)}`],
    ['oversized (8 KB)', `shop-session=${'A'.repeat(8192)}`],
    ['non-ASCII', 'shop-session=ünïcödé✓'],
    ['garbage', 'shop-session=!!!;;;==='],
    ['two values, neither valid', `shop-session=${'A'.repeat(86)}; shop-session=!!!`],
  ])('%s', async (_what, cookie) => {
    const g = await refused(cookie);
    expect(g.host.metric('steadfast_session_rejected_total')).toBe(1n);
  });

  it.each([
    ['the same token twice', (v: string) => `shop-session=${v}; shop-session=${v}`],
    ['garbage before the token', (v: string) => `shop-session=${'A'.repeat(86)}; other=1; shop-session=${v}`],
    ['garbage after the token', (v: string) => `shop-session=${v}; shop-session=!!!`],
  ])('duplicates: the first valid token wins (%s)', async (_what, cookie) => {
    const g = await gateway();
    const valid = tokenOf(cookieOf(g.request(policy())));
    const s = g.request(policy(), [['cookie', cookie(valid)]]);
    expect(s.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
    expect(s.responseHeaderValues('set-cookie')).toEqual([]);
    expect(g.host.metric('steadfast_session_resumed_total')).toBe(1n);
  });

  it.each([
    ['in a second Cookie header', (v: string) => [`other=1`, `shop-session=${v}`]],
    ['after garbage in the first header', (v: string) => [`shop-session=!!!`, `a=b; shop-session=${v}`]],
    ['in the third header, past an empty one', (v: string) => ['', 'x=1', `shop-session=${v}`]],
    [
      'after a forged one in another header',
      (v: string) => [`shop-session=${'A'.repeat(86)}`, `shop-session=${v}`],
    ],
  ])('several Cookie headers (HTTP/1): the first valid token wins (%s)', async (_what, cookies) => {
    const g = await gateway();
    const valid = tokenOf(cookieOf(g.request(policy())));
    const s = g.request(
      policy(),
      cookies(valid).map((c): [string, string] => ['cookie', c]),
    );
    expect(s.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
    expect(s.responseHeaderValues('set-cookie')).toEqual([]);
    expect(g.host.metric('steadfast_session_resumed_total')).toBe(1n);
  });

  it('asks for the other Cookie headers only when the first holds no valid token', async () => {
    const g = await gateway();
    const valid = tokenOf(cookieOf(g.request(policy())));
    const pairs = () => g.host.calls.get('proxy_get_header_map_pairs') ?? 0;
    const before = pairs();
    g.request(policy(), [
      ['cookie', `shop-session=${valid}`],
      ['cookie', 'other=1'],
    ]);
    expect(pairs()).toBe(before);
    g.request(policy(), [['cookie', 'other=1']]);
    expect(pairs()).toBe(before + 1);
    // No Cookie header at all: nothing to look for.
    g.request(policy());
    expect(pairs()).toBe(before + 1);
  });

  it('reads no further than a malformed header serialization, and never traps on it', async () => {
    const g = await gateway();
    const valid = tokenOf(cookieOf(g.request(policy())));
    const cookies: Array<[string, string]> = [
      ['cookie', 'other=1'],
      ['cookie', `shop-session=${valid}`],
    ];
    const good = g.host.serializeHeaderPairs;
    const cases: Array<(b: Uint8Array) => Uint8Array> = [
      (b) => b.subarray(0, b.length - 3), // cut short
      (b) => {
        const c = b.slice();
        new DataView(c.buffer).setUint32(0, 0xffffffff, true); // a count past the size
        return c;
      },
      (b) => {
        const c = b.slice();
        new DataView(c.buffer).setUint32(4, 0xfffffff0, true); // a key size past the end
        return c;
      },
      () => new Uint8Array([1, 0]),
    ];
    for (const corrupt of cases) {
      g.host.serializeHeaderPairs = (p) => corrupt(good(p));
      const s = g.request(policy(), cookies);
      // Not resumed (the token is past the damage), but answered with a new session.
      expect(s.requestHeader('x-steadfast-pin')).toBeUndefined();
      expect(s.responseHeaderValues('set-cookie')).toHaveLength(1);
    }
    g.host.serializeHeaderPairs = good;
    expect(g.request(policy(), cookies).requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.2:8080'));
  });

  it('a token sealed for another rule', async () => {
    const g = await refused((v) => `shop-session=${v}`, 'httproute/default/other/rule/0');
    expect(g.host.metric('steadfast_session_rejected_total')).toBe(1n);
  });

  it('a token from a retired key', async () => {
    const old = sealSessionToken(
      { endpoint: '127.0.0.2:8080', issuedAtS: T0, lastUsedS: T0, expiresAtS: 0 },
      [OLD_KEY],
      RULE,
    );
    const g = await refused(`shop-session=${old}`);
    expect(g.host.metric('steadfast_session_rejected_total')).toBe(1n);
  });

  it('a client-sent pin header never reaches Envoy', async () => {
    const g = await gateway();
    const s = g.request(policy(), [['x-steadfast-pin', pinOf('169.254.169.254:80')]]);
    expect(s.requestHeader('x-steadfast-pin')).toBeUndefined();
    const none = g.host.newStream();
    none.sendRequestHeaders([
      [':method', 'GET'],
      ['x-steadfast-pin', pinOf('127.0.0.1:9901')],
    ]);
    expect(none.requestHeader('x-steadfast-pin')).toBeUndefined();
  });
});

describe('keys', () => {
  it('opens tokens sealed with any listed key and seals with the first', async () => {
    const old = sealSessionToken(
      { endpoint: '127.0.0.4:8080', issuedAtS: T0, lastUsedS: T0, expiresAtS: 0 },
      [OLD_KEY],
      RULE,
    );
    const g = await gateway([KEY, OLD_KEY]);
    const s = g.request(policy(), [['cookie', `shop-session=${old}`]], '127.0.0.4:8080');
    expect(s.requestHeader('x-steadfast-pin')).toBe(pinOf('127.0.0.4:8080'));
  });

  it('refuses a configuration with a key that is not 32 bytes of base64', async () => {
    await expect(
      startedHost({
        pluginConfig: JSON.stringify({ sessionKeys: [KEY.subarray(0, 16).toString('base64')] }),
      }),
    ).rejects.toThrow(/sessionKeys\[0\]: not a base64 32-byte key/);
  });

  it('without keys, a session rule still answers — without a session — and says so in a metric', async () => {
    const g = await gateway([]);
    const s = g.request(policy());
    expect(s.responseHeaderValues('set-cookie')).toEqual([]);
    expect(g.host.metric('steadfast_session_unavailable_total')).toBe(1n);
  });
});
