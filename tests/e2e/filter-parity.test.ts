// The native filter does what the wasm filter does, header for header. Two gateways serve the
// same Gateway API objects, one with each build; every request below goes to both, and what
// came back — status, each response header, the headers the backend saw, the session each
// issued (its cookie's attributes, and inside the sealed token the backend it pins and the
// lifetime it carries) — must be the same. What differs by nature is set aside: the date,
// request ids, each gateway's own port, and the sealed bytes (a fresh nonce every time).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSessionToken, sealSessionToken } from '../support/session-token.js';
import { routeYaml } from './support/attach-config.js';
import { TEST_SESSION_KEY } from './support/gateway-fixture.js';
import { curl, type CurlResponse } from './support/curl.js';
import { type ModeStack, startMode } from './support/mode-stack.js';

const KEY = Buffer.from(TEST_SESSION_KEY, 'base64');
const RULE_ID = (i: number) => `httproute/default/shop/rule/${i}`;

const ROUTES = routeYaml({
  name: 'shop',
  rules: [
    { path: '/cart', session: '{ sessionName: shop-session, type: Cookie }' },
    {
      path: '/perm',
      session: '{ sessionName: perm, absoluteTimeout: 5m, cookieConfig: { lifetimeType: Permanent } }',
    },
    { path: '/idle', session: '{ sessionName: idle, idleTimeout: 1m }' },
    { path: '/hdr', session: '{ sessionName: x-session, type: Header }' },
    {
      path: '/retry',
      session: '{ sessionName: retry-session, type: Cookie }',
      retry: { attempts: 2, codes: [503], backoff: '50ms' },
    },
  ],
});

/** Response headers whose values differ between any two exchanges, whatever the filter does. */
const VOLATILE_RESPONSE = new Set(['date', 'x-envoy-upstream-service-time', 'content-length']);
/** Request headers the backend saw that differ by gateway or by request. */
const VOLATILE_REQUEST = new Set([
  'x-request-id',
  'host',
  ':authority',
  'x-forwarded-for',
  'x-envoy-expected-rq-timeout-ms',
]);

/** A sealed session token: 64 bytes in base64url. */
const SEALED = /[\w-]{86}/g;

interface Seen {
  readonly status: number;
  readonly headers: Record<string, string[]>;
  readonly backendSaw: Record<string, string[]>;
  readonly sessions: Record<string, unknown>;
}

/**
 * What a sealed session carries: whether it pins the backend that answered, its lifetime, and
 * whether it was issued during the exchange (from `startS`, a second's rounding allowed).
 */
function session(token: string, context: string, startS: number, nowS: number, answered: string): unknown {
  const opened = openSessionToken(token, [KEY], context, nowS);
  if (!opened.ok) return { refused: opened.reason };
  return {
    address:
      opened.endpoint.replace(/:\d+$/, '') === answered ? 'the backend that answered' : opened.endpoint,
    lifetimeS: opened.expiresAtS === 0 ? 0 : opened.expiresAtS - opened.issuedAtS,
    fresh: opened.issuedAtS >= startS - 1 && opened.issuedAtS <= nowS,
  };
}

/**
 * What one exchange shows. Where no session pins the request, Envoy's load balancer picks the
 * backend, differently in each gateway: the backend that answered is then named only as such,
 * and a session is checked to pin exactly it.
 */
function seen(r: CurlResponse, context: string, pinnedRequest: boolean, startS: number): Seen {
  const nowS = Math.floor(Date.now() / 1000);
  const answered = (r.headers.get('x-backend-instance')?.[0] ?? '').replace(/^gw-/, '');
  const headers: Record<string, string[]> = {};
  const sessions: Record<string, unknown> = {};
  for (const [name, values] of [...r.headers].sort(([a], [b]) => a.localeCompare(b))) {
    if (VOLATILE_RESPONSE.has(name)) continue;
    if (name === 'set-cookie') {
      headers[name] = values.map((c) => {
        const m = /^([^=]+)=([^;]*)(.*)$/.exec(c);
        if (!m) return c;
        sessions[`cookie ${m[1]}`] = session(m[2]!, context, startS, nowS, answered);
        return `${m[1]}=<sealed>${m[3]}`;
      });
    } else if (name === 'x-session') {
      sessions['header x-session'] = session(values[0]!, context, startS, nowS, answered);
      headers[name] = ['<sealed>'];
    } else if (name === 'x-backend-instance' && !pinnedRequest) {
      headers[name] = ['<balanced>'];
    } else {
      headers[name] = values;
    }
  }
  let backendSaw: Record<string, string[]> = {};
  try {
    const body = JSON.parse(r.body) as { headers?: Record<string, string[]> };
    for (const [name, values] of Object.entries(body.headers ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      // A token the test sealed for this stack's backend (its port) reaches the backend as sent.
      if (!VOLATILE_REQUEST.has(name)) backendSaw[name] = values.map((v) => v.replace(SEALED, '<sealed>'));
    }
  } catch {
    backendSaw = { body: [r.body] };
  }
  return { status: r.status, headers, backendSaw, sessions };
}

describe('the native and the wasm filter, request for request', () => {
  let native: ModeStack;
  let wasm: ModeStack;

  beforeAll(async () => {
    [native, wasm] = await Promise.all([startMode('gateway', ROUTES), startMode('gateway-wasm', ROUTES)]);
    expect(native.build).toBe('native');
    expect(wasm.build).toBe('wasm');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([native?.stop(), wasm?.stop()]);
  });

  /** The same request to both gateways; `args` may depend on the stack (a token pinning its backend). */
  async function both(
    path: string,
    rule: number,
    pinnedRequest: boolean,
    args: (stack: ModeStack) => string[],
  ): Promise<[Seen, Seen]> {
    const startS = Math.floor(Date.now() / 1000);
    const [a, b] = await Promise.all(
      [native, wasm].map((s) => curl(`${s.url}${path.replace('UUID', randomUUID())}`, args(s))),
    );
    return [seen(a!, RULE_ID(rule), pinnedRequest, startS), seen(b!, RULE_ID(rule), pinnedRequest, startS)];
  }

  /**
   * A token sealed for the second backend of `stack`, as a client would send it back. Last used
   * a few seconds ago: an idle session is renewed only when a whole second has passed since, so
   * a token used this very second would be renewed by one gateway and not the other as the
   * clock ticks between them.
   */
  function pinned(stack: ModeStack, rule: number, lifetimeS = 0): string {
    const b = stack.backends[1]!;
    const now = Math.floor(Date.now() / 1000);
    return sealSessionToken(
      {
        endpoint: `${b.address}:${b.port}`,
        issuedAtS: now - 5,
        lastUsedS: now - 5,
        expiresAtS: lifetimeS ? now - 5 + lifetimeS : 0,
      },
      [KEY],
      RULE_ID(rule),
    );
  }

  function expired(stack: ModeStack, rule: number): string {
    const b = stack.backends[1]!;
    const then = Math.floor(Date.now() / 1000) - 600;
    return sealSessionToken(
      { endpoint: `${b.address}:${b.port}`, issuedAtS: then, lastUsedS: then, expiresAtS: then + 60 },
      [KEY],
      RULE_ID(rule),
    );
  }

  it.each([
    ['a new cookie session', '/cart', 0, false, () => []],
    ['a resumed cookie session', '/cart', 0, true, (s: ModeStack) => ['-b', `shop-session=${pinned(s, 0)}`]],
    ['a permanent cookie (Max-Age)', '/perm', 1, false, () => []],
    ['a resumed permanent session', '/perm', 1, true, (s: ModeStack) => ['-b', `perm=${pinned(s, 1, 300)}`]],
    [
      'an idle session renewed on use',
      '/idle',
      2,
      true,
      (s: ModeStack) => ['-b', `idle=${pinned(s, 2, 60)}`],
    ],
    ['an expired session', '/perm', 1, false, (s: ModeStack) => ['-b', `perm=${expired(s, 1)}`]],
    ['a forged token', '/cart', 0, false, () => ['-b', `shop-session=${'A'.repeat(86)}`]],
    ['a garbled token', '/cart', 0, false, () => ['-b', 'shop-session=%%%;%%']],
    ['a token of another rule', '/cart', 0, false, (s: ModeStack) => ['-b', `shop-session=${pinned(s, 1)}`]],
    ['a new header session', '/hdr', 3, false, () => []],
    ['a resumed header session', '/hdr', 3, true, (s: ModeStack) => ['-H', `x-session: ${pinned(s, 3)}`]],
    ['a client-sent pin header', '/cart', 0, false, () => ['-H', 'x-steadfast-pin: MTI3LjAuMC4yOjE=']],
    [
      'client-sent router headers',
      '/cart',
      0,
      false,
      () => ['-H', 'x-envoy-max-retries: 9', '-H', 'x-envoy-upstream-rq-timeout-ms: 1'],
    ],
    [
      'retries held to the backoff floor, in a session',
      '/retry?uuid=UUID&succeedAfter=2&responseCode=503',
      4,
      // Retries leave the pin (Envoy's retry picks another host): the last try is balanced.
      false,
      (s: ModeStack) => ['-b', `retry-session=${pinned(s, 4)}`],
    ],
    ['an unmatched path (the filter does not run)', '/nowhere', 0, false, () => []],
  ] as const)('%s', async (_name, path, rule, pinnedRequest, args) => {
    const [n, w] = await both(path, rule, pinnedRequest, args);
    expect(n).toEqual(w);
    expect(n.status).toBeGreaterThan(0);
  });
});
