// The filter's answer cache against the compiled filter (attach mode, docs/attach.md): the
// lookup instance and the applying instance share one VM, as in Envoy. Over random tables
// and random requests, every answer the lookup hands on equals what the resolver answers
// for that request; scopes the filter cannot read, and oversized or odd keys, are never
// reused; garbage never traps the VM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listenerFrom } from '../../extproc/src/server/grpc/request-attributes.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { ResolveRequest } from '../../extproc/src/resolve/request.js';
import { outcomeOf } from '../../extproc/src/server/served-config.js';
import type { PolicyTable } from '../../extproc/src/table/policy-table.js';
import { LogLevel, propertyKey, ProxyWasmHost } from '../emulator/proxy-wasm-host.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
import { route, table } from '../resolve/table-builder.js';
import { REPO_ROOT, filterWasm } from '../support/paths.js';
import { METADATA_POLICY } from './filter-harness.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

const METADATA_SCOPE = propertyKey('metadata', 'filter_metadata', 'steadfast', 'scope');
const CACHED_ANSWER = 'steadfast_answer';
const APPLY_ROOT = 1;
const LOOKUP_ROOT = 3;
const SEGMENTS = ['', 'a', 'b', 'a/b', 'a/b/c', 'b/a'];

/** A VM with the applying instance (root 1) and the lookup instance (root 3), at a fixed clock. */
async function cacheVm(clock: { ns: bigint }, ttlMs = 500): Promise<ProxyWasmHost> {
  const host = await ProxyWasmHost.load(filterWasm(), {
    logLevel: LogLevel.Info,
    pluginConfig: JSON.stringify({ policySource: 'metadata', answerCache: true, answerCacheTtlMs: ttlMs }),
    now: () => clock.ns,
  });
  expect(host.start()).toBe(true);
  expect(host.startPlugin(LOOKUP_ROOT, JSON.stringify({ role: 'lookup' }))).toBe(true);
  return host;
}

function headersOf(req: ResolveRequest): Array<[string, string]> {
  return [
    [':authority', req.authority],
    [':method', req.method],
    [':path', req.path],
    ...Object.entries(req.headers ?? {}),
  ];
}

/** The lookup's answer for a request: the value it handed on, or undefined (miss). */
function lookUp(host: ProxyWasmHost, req: ResolveRequest): string | undefined {
  const s = host.newStream({}, LOOKUP_ROOT);
  s.sendRequestHeaders(headersOf(req));
  const v = s.properties.get(CACHED_ANSWER);
  s.complete();
  return v === undefined ? undefined : new TextDecoder().decode(v);
}

/** The applying instance with ext_proc's answer as metadata: what Envoy does on a miss. */
function applyFresh(host: ProxyWasmHost, req: ResolveRequest, token?: string, scope?: string): void {
  const props: Record<string, string> = {};
  if (token !== undefined) props[METADATA_POLICY] = token;
  if (scope !== undefined) props[METADATA_SCOPE] = scope;
  const s = host.newStream(props, APPLY_ROOT);
  s.sendRequestHeaders(headersOf(req));
  s.sendResponseHeaders([[':status', '200']]);
  s.complete();
}

/** Random routes; without header matches when `headers` is false (answers that read headers are never reused). */
function randomTable(rand: () => number, headers: boolean): PolicyTable {
  const routes = [];
  for (let i = 0; i < 8; i++) {
    const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 2 }).map((matches) =>
      headers ? matches : matches.map((m) => ({ ...m, headers: [] })),
    );
    const hostnames = rand() < 0.2 ? [pick(rand, HOSTS), pick(rand, HOSTS)] : [pick(rand, HOSTS)];
    routes.push(route({ name: `r${i}`, hostnames: [...new Set(hostnames)], rules }));
  }
  return table(...routes);
}

function randomRequest(rand: () => number): ResolveRequest {
  const host = pick(rand, [
    'a.example.com',
    'A.Example.com:8080',
    'b.example.com',
    'c.example.com.',
    'd.x.example.com',
    'example.com',
    'other.org',
  ]);
  const seg = pick(rand, [...SEGMENTS, 'a/b/c/d', 'ab', 'a7']);
  const query = pick(rand, ['', '', '?q=1', '?q=2', '?q=1&q=2', '?x=1&q=1', '?q=%31', '?']);
  return {
    method: pick(rand, ['GET', 'POST']),
    authority: host,
    path: `/${seg}${rand() < 0.2 ? '/' : ''}${query}`,
    headers: rand() < 0.5 ? { 'x-v': pick(rand, ['1', '2']) } : {},
  };
}

describe('the answer cache (compiled filter)', () => {
  it('hands on only answers equal to what the resolver answers, over random tables and requests', async () => {
    let hits = 0;
    let seeds = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rand = rng(seed);
      const resolver = compileResolver(buildIr(randomTable(rand, seed % 3 === 0)));
      const clock = { ns: 1_000_000_000_000n };
      const host = await cacheVm(clock);
      for (let i = 0; i < 500; i++) {
        const req = randomRequest(rand);
        const outcome = outcomeOf(resolver, { ...req, headers: req.headers ?? {} });
        const want = outcome.result === 'matched' ? outcome.token : undefined;
        const cached = lookUp(host, req);
        if (cached !== undefined) {
          hits++;
          expect(cached === 'sf0' ? undefined : cached, `seed ${seed}: ${JSON.stringify(req)}`).toBe(want);
        } else {
          applyFresh(host, req, want, outcome.scope);
        }
      }
      seeds++;
      expect(host.logged(LogLevel.Error)).toEqual([]);
    }
    expect(seeds).toBe(40);
    // Not vacuous: most repeated requests are answered from the cache.
    expect(hits).toBeGreaterThan(3000);
  });

  it('refreshes answers after their TTL (one request asks, the others wait at most 300 ms) and forgets them on a new generation', async () => {
    const clock = { ns: 5_000_000_000n };
    const host = await cacheVm(clock, 200);
    const req = { method: 'GET', authority: 'shop.example', path: '/cart' };
    applyFresh(host, req, 'sf1;id=a', 'sc1;g=one');
    expect(lookUp(host, req)).toBe('sf1;id=a');
    clock.ns += 199_000_000n;
    expect(lookUp(host, req)).toBe('sf1;id=a');
    clock.ns += 1_000_000n;
    // Due: this request asks ext_proc; the next ones keep the answer meanwhile.
    expect(lookUp(host, req)).toBeUndefined();
    expect(lookUp(host, req)).toBe('sf1;id=a');
    clock.ns += 250_000_000n;
    // The refresh did not come back in time: another request asks.
    expect(lookUp(host, req)).toBeUndefined();
    expect(lookUp(host, req)).toBe('sf1;id=a');
    clock.ns += 50_000_000n;
    // 500 ms after it was stored the answer is gone.
    expect(lookUp(host, req)).toBeUndefined();
    expect(lookUp(host, req)).toBeUndefined();
    applyFresh(host, req, 'sf1;id=a2', 'sc1;g=one');
    expect(lookUp(host, req)).toBe('sf1;id=a2');
    const other = { method: 'GET', authority: 'shop.example', path: '/other' };
    applyFresh(host, other, 'sf1;id=b', 'sc1;g=two');
    expect(lookUp(host, other)).toBe('sf1;id=b');
    expect(lookUp(host, req)).toBeUndefined();
  });

  it('never reuses an answer without a scope it can read, nor a request it cannot key', async () => {
    const clock = { ns: 5_000_000_000n };
    const host = await cacheVm(clock);
    const plain = { method: 'GET', authority: 'shop.example', path: '/cart' };
    for (const scope of [
      undefined,
      '',
      'sc1',
      'sc1;',
      'sc2;g=1',
      'sc1;g=1;h=x-v',
      'sc1;g=1;q=2',
      `sc1;g=${'9'.repeat(300)}`,
    ]) {
      applyFresh(host, plain, 'sf1;id=a', scope);
      expect(lookUp(host, plain), String(scope)).toBeUndefined();
    }
    // A token that looks like the lookup's "no policy" value is not stored either.
    applyFresh(host, plain, 'sf0', 'sc1;g=1');
    expect(lookUp(host, plain)).toBeUndefined();
    const odd: ResolveRequest[] = [
      { method: 'GET', authority: '', path: '/cart' },
      { method: 'GET', authority: 'shöp.example', path: '/cart' },
      { method: 'GET', authority: 'shop.example', path: `/${'a'.repeat(5000)}` },
      { method: 'GET', authority: 'shop.example', path: '/caf\u00e9' },
      { method: 'GET', authority: `${'h'.repeat(300)}.example`, path: '/' },
      { method: '', authority: 'shop.example', path: '/' },
    ];
    for (const req of odd) {
      applyFresh(host, req, 'sf1;id=a', 'sc1;g=1');
      expect(lookUp(host, req), JSON.stringify(req).slice(0, 80)).toBeUndefined();
    }
  });

  it('stays bounded and never traps under many distinct keys and garbage metadata', async () => {
    const clock = { ns: 5_000_000_000n };
    const host = await cacheVm(clock);
    const rand = rng(7);
    for (let i = 0; i < 6000; i++) {
      const req = { method: 'GET', authority: `h${i % 97}.example`, path: `/p/${i}?q=${i % 3}` };
      const junk = String.fromCharCode(
        ...Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 256)),
      );
      applyFresh(
        host,
        req,
        rand() < 0.5 ? junk : 'sf1;id=x',
        rand() < 0.1 ? junk : `sc1;g=1${rand() < 0.3 ? ';q=1' : ''}`,
      );
      lookUp(host, req);
    }
    const early = { method: 'GET', authority: 'h0.example', path: '/p/0?q=0' };
    expect(lookUp(host, early)).toBeUndefined();
    const last = { method: 'GET', authority: 'h5999.example', path: '/late' };
    applyFresh(host, last, 'sf1;id=late', 'sc1;g=1');
    expect(lookUp(host, last)).toBe('sf1;id=late');
    expect(host.memoryBytes()).toBeLessThan(16 << 20);
  });
});

describe('the answer cache with Gateway listeners (scope l=1)', () => {
  const GATEWAY_PORT = propertyKey(
    'xds',
    'listener_metadata',
    'filter_metadata',
    'steadfast',
    'gateway_port',
  );
  const PORT = propertyKey('destination', 'port');
  const port = (n: number): Uint8Array => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
    return b;
  };
  /** A listener with (or without) its metadata gateway_port, on local port `p`. */
  const on = (declared: string | undefined, p: number | undefined): Record<string, string | Uint8Array> => ({
    ...(declared !== undefined ? { [GATEWAY_PORT]: declared } : {}),
    ...(p !== undefined ? { [PORT]: port(p) } : {}),
  });

  function lookUpOn(host: ProxyWasmHost, listener: Record<string, string | Uint8Array>, req: ResolveRequest) {
    const s = host.newStream(listener, LOOKUP_ROOT);
    s.sendRequestHeaders(headersOf(req));
    const v = s.properties.get(CACHED_ANSWER);
    s.complete();
    return v === undefined ? undefined : new TextDecoder().decode(v);
  }
  function applyOn(
    host: ProxyWasmHost,
    listener: Record<string, string | Uint8Array>,
    req: ResolveRequest,
    token: string,
  ) {
    const s = host.newStream(
      { ...listener, [METADATA_POLICY]: token, [METADATA_SCOPE]: 'sc1;g=1;l=1' },
      APPLY_ROOT,
    );
    s.sendRequestHeaders(headersOf(req));
    s.complete();
  }

  it("keys answers on the listener's gateway_port metadata and local port", async () => {
    const host = await cacheVm({ ns: 5_000_000_000n });
    const req = { method: 'GET', authority: 'shop.example', path: '/cart' };
    applyOn(host, on(undefined, 80), req, 'sf1;id=eighty');
    applyOn(host, on(undefined, 8080), req, 'sf1;id=eighty-eighty');
    applyOn(host, on('9090', 80), req, 'sf1;id=declared');
    expect(lookUpOn(host, on(undefined, 80), req)).toBe('sf1;id=eighty');
    expect(lookUpOn(host, on(undefined, 8080), req)).toBe('sf1;id=eighty-eighty');
    expect(lookUpOn(host, on('9090', 80), req)).toBe('sf1;id=declared');
    expect(lookUpOn(host, on('9091', 80), req)).toBeUndefined();
    expect(lookUpOn(host, on(undefined, 443), req)).toBeUndefined();
    // Without the local port the request cannot be keyed: it asks, and is not stored.
    expect(lookUpOn(host, on(undefined, undefined), req)).toBeUndefined();
    applyOn(host, on('7070', undefined), req, 'sf1;id=portless');
    expect(lookUpOn(host, on('7070', undefined), req)).toBeUndefined();
    // Oversized metadata is never keyed.
    applyOn(host, on('x'.repeat(100), 80), req, 'sf1;id=huge');
    expect(lookUpOn(host, on('x'.repeat(100), 80), req)).toBeUndefined();
  });
});

describe('the answer cache with Gateway listeners, against the resolver', () => {
  it('hands on only what the resolver answers for the request on its listener', async () => {
    const text = readFileSync(join(REPO_ROOT, 'tests/resolve/testdata/two-listeners.yaml'), 'utf8');
    const resolver = compileResolver(compileSnapshot([{ path: 'config.yaml', text }]).ir);
    const GATEWAY_PORT = propertyKey(
      'xds',
      'listener_metadata',
      'filter_metadata',
      'steadfast',
      'gateway_port',
    );
    const PORT = propertyKey('destination', 'port');
    const double = (n: number): Uint8Array => {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setFloat64(0, n, true);
      return b;
    };
    const u64 = (n: number): Uint8Array => {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
      return b;
    };
    // What Envoy hands the filter and the control service for one listener.
    type Listener = { declared?: number | string; local: number };
    const listeners: Listener[] = [
      { local: 8080 },
      { local: 9090 },
      { local: 10080 },
      { declared: 8080, local: 10080 },
      { declared: '9090', local: 10080 },
      { declared: 9090, local: 8080 },
      { declared: 'eighty', local: 8080 },
    ];
    const rand = rng(11);
    const clock = { ns: 1_000_000_000_000n };
    const host = await cacheVm(clock);
    let hits = 0;
    for (let i = 0; i < 2000; i++) {
      const l = pick(rand, listeners);
      const req: ResolveRequest = {
        method: 'GET',
        authority: pick(rand, ['shop.example', 'shop.example:8080', 'other.example']),
        path: pick(rand, ['/api', '/api/x', '/shared', '/', '/shared/y?z=1']),
        headers: {},
      };
      const outcome = outcomeOf(resolver, {
        ...req,
        headers: {},
        listener: listenerFrom(l.declared, l.local) ?? {},
      });
      const want = outcome.result === 'matched' ? outcome.token : undefined;
      const props: Record<string, Uint8Array | string> = {
        [PORT]: u64(l.local),
        ...(l.declared === undefined
          ? {}
          : { [GATEWAY_PORT]: typeof l.declared === 'number' ? double(l.declared) : l.declared }),
      };
      const s = host.newStream(props, LOOKUP_ROOT);
      s.sendRequestHeaders(headersOf(req));
      const found = s.properties.get(CACHED_ANSWER);
      s.complete();
      if (found !== undefined) {
        hits++;
        const cached = new TextDecoder().decode(found);
        expect(cached === 'sf0' ? undefined : cached, `${JSON.stringify(l)} ${JSON.stringify(req)}`).toBe(
          want,
        );
      } else {
        const a = host.newStream(
          {
            ...props,
            ...(want !== undefined ? { [METADATA_POLICY]: want } : {}),
            ...(outcome.scope !== undefined ? { [METADATA_SCOPE]: outcome.scope } : {}),
          },
          APPLY_ROOT,
        );
        a.sendRequestHeaders(headersOf(req));
        a.complete();
      }
    }
    expect(hits).toBeGreaterThan(1500);
  });
});
