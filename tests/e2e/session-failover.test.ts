// GEP-1619: a session whose backend is gone "SHOULD" move to another. In both modes, with
// cookie and header sessions and no retry stanza: the pinned backend is killed, and 200
// requests with the old token all succeed on live backends, each with a new token naming
// the backend that served it; when the backend comes back, new sessions reach it again.
// What makes it hold: retries skip hosts already tried (retry_host_predicate
// previous_hosts) and an endpoint that refuses connections is ejected (outlier detection).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { openSessionToken } from '../support/session-token.js';
import { within } from './support/attach-stack.js';
import { TEST_SESSION_KEY } from './support/gateway-fixture.js';
import { MODES, type ModeStack, startMode } from './support/mode-stack.js';
import { POLICY_HEADER, oneWithPolicy } from './support/with-policy.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      sessionPersistence: { sessionName: shop-session, type: Cookie }
      backendRefs: [{ name: app, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /hdr } }]
      sessionPersistence: { sessionName: x-session, type: Header }
      backendRefs: [{ name: app, port: 80 }]
`;

const KEYS = [Buffer.from(TEST_SESSION_KEY, 'base64')];

interface Session {
  readonly rule: string;
  readonly path: string;
  /** The request headers that carry `token`. */
  carry(token: string): Record<string, string>;
  /** The token a response issued, if any. */
  issued(r: Response): string | undefined;
}

const SESSIONS: Record<'cookie' | 'header', Session> = {
  cookie: {
    rule: 'httproute/default/shop/rule/0',
    path: '/cart',
    carry: (token) => ({ cookie: `shop-session=${token}` }),
    issued: (r) =>
      r.headers
        .getSetCookie()
        .map((c) => /^shop-session=([\w-]{86});/.exec(c)?.[1])
        .find((t) => t !== undefined),
  },
  header: {
    rule: 'httproute/default/shop/rule/1',
    path: '/hdr',
    carry: (token) => ({ 'x-session': token }),
    issued: (r) => r.headers.get('x-session') ?? undefined,
  },
};

const instance = (r: Response): string => r.headers.get('x-backend-instance') ?? '';

describe.each(MODES)('%s mode', (mode) => {
  let stack: ModeStack;
  const restarted: RunningBackend[] = [];

  beforeAll(async () => {
    stack = await startMode(mode, ROUTES);
  });

  afterAll(async () => {
    await Promise.all(restarted.map((b) => b.close()));
    await stack?.stop();
  });

  // Each exchange with its rule's policy: in attach mode one whose ext_proc answer came too
  // late went on without it (no session, no failover), and is sent again (support/with-policy.ts).
  const get = (session: Session, headers: Record<string, string> = {}): Promise<Response> =>
    oneWithPolicy(
      stack,
      async () => {
        const r = await fetch(`${stack.url}${session.path}`, { headers });
        await r.arrayBuffer();
        return r;
      },
      (r) => r.headers.has(POLICY_HEADER),
    );

  it.each([
    ['cookie', 1],
    ['header', 2],
  ] as const)(
    '%s session: the pinned backend is killed → 200/200 from live backends, each with a new token; back → new sessions reach it',
    async (kind, victimIndex) => {
      const session = SESSIONS[kind];
      const victim = stack.backends[victimIndex]!;
      // A session pinned to the backend about to be killed (new sessions follow round robin).
      let first = await get(session);
      for (let i = 0; i < 30 && instance(first) !== victim.name; i++) first = await get(session);
      expect(instance(first)).toBe(victim.name);
      const token = session.issued(first)!;
      expect(token).toBeDefined();

      await victim.close();
      const live = new Map(stack.backends.filter((b) => b !== victim).map((b) => [b.name, b]));
      const statuses = new Map<number, number>();
      for (let i = 0; i < 200; i++) {
        const r = await get(session, session.carry(token));
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        const servedBy = live.get(instance(r));
        expect(servedBy, `request ${i}: ${r.status} from "${instance(r)}"`).toBeDefined();
        // The new token names the backend that answered.
        const moved = openSessionToken(
          session.issued(r) ?? '',
          KEYS,
          session.rule,
          Math.floor(Date.now() / 1000),
        );
        expect(moved.ok && moved.endpoint).toBe(`${servedBy!.address}:${servedBy!.port}`);
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 200 });

      // Back on the same address and port: once its ejection ends, new sessions reach it.
      const back = await startEchoBackend({ address: victim.address, port: victim.port, name: victim.name });
      restarted.push(back);
      await within(30_000, async () => instance(await get(session)) === victim.name, 50);
    },
    60_000,
  );
});
