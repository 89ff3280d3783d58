// Session persistence (GEP-1619) against the real Envoy: the filter's sealed cookie pins
// requests through stateful_session; bad tokens start a new session and never fail a
// request; a dead backend's sessions move; two Envoys with the same keys share sessions.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { startEnvoy, type EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { sealSessionToken, openSessionToken } from '../support/session-token.js';
import { encodePolicyToken } from '../../extproc/src/policy/policy-token.js';
import { REPO_ROOT } from '../support/paths.js';
import { curl } from './support/curl.js';
import { FILTER_BUILDS } from '../support/filter-builds.js';
import { rewriteEnvoyConfig } from './support/envoy-config-rewrite.js';

const KEY = randomBytes(32);
const RULE = 'httproute/default/shop/rule/0';
const TOKEN = encodePolicyToken({
  rule: RULE,
  kind: 'http',
  session: { type: 'cookie', name: 'shop-session', path: '/', lifetime: 'session' },
});

describe.each(FILTER_BUILDS)('the %s filter', (build) => {
  let backends: RunningBackend[];
  let envoys: EnvoyProcess[];

  async function gateway(): Promise<EnvoyProcess> {
    const base = readFileSync(join(REPO_ROOT, 'tests/e2e/testdata/session-gateway.yaml'), 'utf8').replace(
      'POLICY_TOKEN',
      `'${TOKEN}'`,
    );
    const config = rewriteEnvoyConfig(base, {
      clusters: { app: backends.map((b) => ({ address: b.address, port: b.port })) },
      filterConfig: JSON.stringify({ policySource: 'route', sessionKeys: [KEY.toString('base64')] }),
      build,
    });
    return startEnvoy({ config });
  }

  beforeAll(async () => {
    backends = await Promise.all(
      ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((address, i) =>
        startEchoBackend({ address, name: `b${i + 1}` }),
      ),
    );
    envoys = [await gateway(), await gateway()];
  });

  afterAll(async () => {
    await Promise.all((envoys ?? []).map((e) => e.stop()));
    await Promise.all((backends ?? []).map((b) => b.close()));
  });

  function sessionCookie(res: { headers: Map<string, string[]> }): string | undefined {
    const set = (res.headers.get('set-cookie') ?? []).find((c) => c.startsWith('shop-session='));
    return set ? /^shop-session=([^;]+)/.exec(set)![1] : undefined;
  }

  const instance = (res: { headers: Map<string, string[]> }): string =>
    res.headers.get('x-backend-instance')?.[0] ?? '';

  describe('cookie sessions through Envoy', () => {
    it('a first response starts a session; 50 requests with its cookie reach the same backend', async () => {
      const url = envoys[0]!.url('gateway');
      const first = await curl(`${url}/`);
      expect(first.status).toBe(200);
      const setCookie = first.headers.get('set-cookie')![0]!;
      expect(setCookie).toMatch(/^shop-session=[\w-]{86}; Path=\/; HttpOnly; SameSite=Strict$/);
      expect(first.headers.get('x-steadfast-pin')).toBeUndefined();
      const token = sessionCookie(first)!;
      const pinned = instance(first);
      for (let i = 0; i < 50; i++) {
        const r = await curl(`${url}/`, ['-H', `cookie: shop-session=${token}`]);
        expect(r.status).toBe(200);
        expect(instance(r)).toBe(pinned);
        expect(sessionCookie(r)).toBeUndefined();
      }
    });

    it('new clients are load balanced across the backends', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 30; i++) seen.add(instance(await curl(`${envoys[0]!.url('gateway')}/`)));
      expect([...seen].sort()).toEqual(['b1', 'b2', 'b3']);
    });

    it.each([
      ['forged', `shop-session=${'A'.repeat(86)}`],
      ['truncated', 'shop-session=AQAAAAAA'],
      ['oversized (8 KB)', `shop-session=${'x'.repeat(8192)}`],
      ['non-ASCII', 'shop-session=\u00e9\u00e8'],
    ])('a %s cookie → a new valid session, never a 5xx', async (_what, cookie) => {
      const r = await curl(`${envoys[0]!.url('gateway')}/`, ['-H', `cookie: ${cookie}`]);
      expect(r.status).toBe(200);
      const token = sessionCookie(r)!;
      expect(openSessionToken(token, [KEY], RULE, Math.floor(Date.now() / 1000))).toMatchObject({ ok: true });
    });

    it.each([
      ['the cloud metadata address', '169.254.169.254:80'],
      ["Envoy's own admin port", 'ENVOY_ADMIN'],
    ])('a validly sealed token naming %s never reaches it', async (_what, target) => {
      const admin = envoys[0]!.adminUrl.replace('http://', '');
      const endpoint = target === 'ENVOY_ADMIN' ? admin : target;
      const now = Math.floor(Date.now() / 1000);
      const evil = sealSessionToken({ endpoint, issuedAtS: now, lastUsedS: now, expiresAtS: 0 }, [KEY], RULE);
      const r = await curl(`${envoys[0]!.url('gateway')}/`, ['-H', `cookie: shop-session=${evil}`]);
      expect(r.status).toBe(200);
      expect(['b1', 'b2', 'b3']).toContain(instance(r));
      const moved = openSessionToken(sessionCookie(r)!, [KEY], RULE, now);
      expect(moved.ok && moved.endpoint).not.toBe(endpoint);
    });

    it('a client cannot steer with the pin header itself', async () => {
      const pin = Buffer.from(`${backends[2]!.address}:${backends[2]!.port}`).toString('base64');
      const seen = new Set<string>();
      for (let i = 0; i < 12; i++)
        seen.add(instance(await curl(`${envoys[0]!.url('gateway')}/`, ['-H', `x-steadfast-pin: ${pin}`])));
      expect(seen.size).toBeGreaterThan(1);
    });

    it('two Envoys with the same keys accept each other’s sessions', async () => {
      const first = await curl(`${envoys[0]!.url('gateway')}/`);
      const token = sessionCookie(first)!;
      for (let i = 0; i < 10; i++) {
        const r = await curl(`${envoys[1]!.url('gateway')}/`, ['-H', `cookie: shop-session=${token}`]);
        expect(instance(r)).toBe(instance(first));
      }
    });

    it('the pinned backend is killed → the next request succeeds on another backend with a new token', async () => {
      const url = envoys[0]!.url('gateway');
      let first = await curl(`${url}/`);
      while (instance(first) !== 'b3') first = await curl(`${url}/`);
      const token = sessionCookie(first)!;
      await backends[2]!.close();
      const movedCount = async () =>
        (await envoys[0]!.stats()).get('wasmcustom.steadfast_session_moved_total') ?? 0;
      const before = await movedCount();
      const r = await curl(`${url}/`, ['-H', `cookie: shop-session=${token}`]);
      expect(r.status).toBe(200);
      expect(['b1', 'b2']).toContain(instance(r));
      const moved = sessionCookie(r)!;
      expect(moved).toBeDefined();
      const servedBy = backends.find((b) => b.name === instance(r))!;
      const opened = openSessionToken(moved, [KEY], RULE, Math.floor(Date.now() / 1000));
      expect(opened.ok && opened.endpoint).toBe(`${servedBy.address}:${servedBy.port}`);
      expect(await movedCount()).toBe(before + 1);
    });
  });
});
