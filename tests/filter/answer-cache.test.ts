// The filter's answer cache against the compiled filter (attach mode, docs/attach.md): the
// lookup instance and the applying instance share one VM, as in Envoy. Over random tables
// and random requests, every answer the lookup hands on equals what the resolver answers
// for that request; scopes the filter cannot read, and oversized or odd keys, are never
// reused; garbage never traps the VM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_HEADERS, listenerFrom } from '../../extproc/src/server/grpc/request-attributes.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { ResolveRequest } from '../../extproc/src/resolve/request.js';
import { outcomeOf } from '../../extproc/src/server/served-config.js';
import type { PolicyTable } from '../../extproc/src/policy/policy-table.js';
import { LogLevel, propertyKey, ProxyWasmHost } from '../emulator/proxy-wasm-host.js';
import type { StringMatch } from '../../extproc/src/policy/policy-table.js';
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

/** A request as Envoy holds it: its other headers as pairs, a name may come more than once. */
type CacheRequest = ResolveRequest & { readonly pairs?: ReadonlyArray<readonly [string, string]> };

function headersOf(req: CacheRequest): Array<[string, string]> {
  return [
    [':authority', req.authority],
    [':method', req.method],
    [':path', req.path],
    ...Object.entries(req.headers ?? {}),
    ...(req.pairs ?? []).map(([k, v]): [string, string] => [k, v]),
  ];
}

/** What the control service reads of a request's pairs: repeated names joined by commas, as ext_proc decoding does. */
function joined(pairs: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) out[k] = k in out ? `${out[k]},${v}` : v;
  return out;
}

/** The lookup's answer for a request: the value it handed on, or undefined (miss). */
function lookUp(host: ProxyWasmHost, req: CacheRequest): string | undefined {
  const s = host.newStream({}, LOOKUP_ROOT);
  s.sendRequestHeaders(headersOf(req));
  const v = s.properties.get(CACHED_ANSWER);
  s.complete();
  return v === undefined ? undefined : new TextDecoder().decode(v);
}

/** The applying instance with ext_proc's answer as metadata: what Envoy does on a miss. */
function applyFresh(host: ProxyWasmHost, req: CacheRequest, token?: string, scope?: string): void {
  const props: Record<string, string> = {};
  if (token !== undefined) props[METADATA_POLICY] = token;
  if (scope !== undefined) props[METADATA_SCOPE] = scope;
  const s = host.newStream(props, APPLY_ROOT);
  s.sendRequestHeaders(headersOf(req));
  s.sendResponseHeaders([[':status', '200']]);
  s.complete();
}

/** A header condition over the names and values randomRequest sends. */
function randomHeaderMatch(rand: () => number): StringMatch {
  const name = pick(rand, ['x-v', 'x-w', 'X-W']);
  return rand() < 0.7
    ? { type: 'Exact', name, value: pick(rand, ['1', '2', '', '1,2']) }
    : { type: 'RegularExpression', name, value: pick(rand, ['1.*', '.*2', '']) };
}

/** Random routes; without header matches when `headers` is false, else with one or two per match on several names. */
function randomTable(rand: () => number, headers: boolean): PolicyTable {
  const routes = [];
  for (let i = 0; i < 8; i++) {
    const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 2 }).map((matches) =>
      matches.map((m) => ({
        ...m,
        headers: !headers
          ? []
          : (m.headers ?? []).length === 0
            ? []
            : rand() < 0.5
              ? [randomHeaderMatch(rand)]
              : [randomHeaderMatch(rand), randomHeaderMatch(rand)],
      })),
    );
    const hostnames = rand() < 0.2 ? [pick(rand, HOSTS), pick(rand, HOSTS)] : [pick(rand, HOSTS)];
    routes.push(route({ name: `r${i}`, hostnames: [...new Set(hostnames)], rules }));
  }
  return table(...routes);
}

function randomRequest(rand: () => number): CacheRequest {
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
    pairs: Array.from({ length: pick(rand, [0, 1, 1, 2, 3]) }, (): [string, string] => [
      pick(rand, ['x-v', 'x-v', 'x-w', 'x-other']),
      pick(rand, ['1', '2', '', '1,2']),
    ]),
  };
}

describe('the answer cache (compiled filter)', () => {
  it('hands on only answers equal to what the resolver answers, over random tables and requests', async () => {
    let hits = 0;
    let headerHits = 0;
    let seeds = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rand = rng(seed);
      const readsHeaders = seed % 3 === 0;
      const resolver = compileResolver(buildIr(randomTable(rand, readsHeaders)));
      const clock = { ns: 1_000_000_000_000n };
      const host = await cacheVm(clock);
      for (let i = 0; i < 500; i++) {
        const req = randomRequest(rand);
        const outcome = outcomeOf(resolver, { ...req, headers: joined(req.pairs ?? []) });
        const want = outcome.result === 'matched' ? outcome.token : undefined;
        const cached = lookUp(host, req);
        if (cached !== undefined) {
          hits++;
          if (outcome.scope?.includes(';h=')) headerHits++;
          expect(cached === 'sf0' ? undefined : cached, `seed ${seed}: ${JSON.stringify(req)}`).toBe(want);
        } else {
          applyFresh(host, req, want, outcome.scope);
        }
      }
      seeds++;
      expect(host.logged(LogLevel.Error)).toEqual([]);
    }
    expect(seeds).toBe(40);
    // Not vacuous: most repeated requests are answered from the cache, those of hosts whose
    // rules read headers included.
    expect(hits).toBeGreaterThan(3000);
    expect(headerHits).toBeGreaterThan(300);
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
      'sc1;g=1;q=2',
      'sc1;g=1;x=1',
      'sc1;g=1;h2=x-v',
      'sc1;g=1;h=',
      'sc1;g=1;h=x-v,',
      'sc1;g=1;h=X-V',
      'sc1;g=1;h=x-w,x-v',
      'sc1;g=1;h=x-v,x-v',
      'sc1;g=1;h=x v',
      'sc1;g=1;h=x:v',
      'sc1;g=1;h=x-v;h=x-w',
      `sc1;g=1;h=${Array.from({ length: 9 }, (_, i) => `x-${i}`).join(',')}`,
      `sc1;g=1;h=x-${'v'.repeat(1100)}`,
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

describe('the answer cache for hosts whose rules read headers (scope h=)', () => {
  const at = (pairs: Array<[string, string]>, path = '/cart'): CacheRequest => ({
    method: 'GET',
    authority: 'shop.example',
    path,
    pairs,
  });

  it('keys answers on every value of each named header, telling absent, empty and repeated apart', async () => {
    const host = await cacheVm({ ns: 5_000_000_000n });
    const scope = 'sc1;g=1;h=x-beta,x-env';
    const cases: Array<[string, Array<[string, string]>]> = [
      ['absent', []],
      ['empty', [['x-beta', '']]],
      ['on', [['x-beta', 'on']]],
      ['off', [['x-beta', 'off']]],
      [
        'on-on',
        [
          ['x-beta', 'on'],
          ['x-beta', 'on'],
        ],
      ],
      [
        'on-off',
        [
          ['x-beta', 'on'],
          ['x-beta', 'off'],
        ],
      ],
      [
        'off-on',
        [
          ['x-beta', 'off'],
          ['x-beta', 'on'],
        ],
      ],
      ['joined', [['x-beta', 'on,off']]],
      ['env', [['x-env', 'on']]],
      [
        'both',
        [
          ['x-beta', 'on'],
          ['x-env', 'prod'],
        ],
      ],
    ];
    for (const [name, pairs] of cases) applyFresh(host, at(pairs), `sf1;id=${name}`, scope);
    for (const [name, pairs] of cases) expect(lookUp(host, at(pairs)), name).toBe(`sf1;id=${name}`);
    // Different headers in another order: the same values of each, the same answer.
    expect(
      lookUp(
        host,
        at([
          ['x-env', 'prod'],
          ['x-beta', 'on'],
        ]),
      ),
    ).toBe('sf1;id=both');
    // Headers the scope does not name do not change the key, wherever they are.
    expect(
      lookUp(
        host,
        at([
          ['x-other', '1'],
          ['x-beta', 'on'],
          ['cookie', 'a=b'],
        ]),
      ),
    ).toBe('sf1;id=on');
    expect(lookUp(host, at([['x-beta', 'maybe']]))).toBeUndefined();
    expect(lookUp(host, at([['x-beta', 'on']], '/other'))).toBeUndefined();
  });

  it('reads the request headers with one host call on the lookup path', async () => {
    const host = await cacheVm({ ns: 5_000_000_000n });
    const req = at([
      ['x-a', '1'],
      ['x-b', '2'],
      ['x-c', '3'],
      ['x-a', '4'],
    ]);
    applyFresh(host, req, 'sf1;id=abc', 'sc1;g=1;h=x-a,x-b,x-c');
    host.calls.clear();
    expect(lookUp(host, req)).toBe('sf1;id=abc');
    expect(host.calls.get('proxy_get_header_map_pairs')).toBe(1);
  });

  it('never keys a request over the bounds: too many header pairs, too many value bytes, values outside printable ASCII', async () => {
    const host = await cacheVm({ ns: 5_000_000_000n });
    const scope = 'sc1;g=1;h=x-beta';
    /** `n` header pairs in all, the three of the request line included. */
    const padded = (n: number, beta: string): CacheRequest =>
      at([
        ...Array.from({ length: n - 4 }, (_, i): [string, string] => [`x-pad-${i}`, '1']),
        ['x-beta', beta],
      ]);
    // The control service reads the first MAX_HEADERS entries: up to there the key holds.
    expect(MAX_HEADERS).toBe(256);
    applyFresh(host, padded(256, 'on'), 'sf1;id=256', scope);
    expect(lookUp(host, padded(256, 'on'))).toBe('sf1;id=256');
    applyFresh(host, padded(257, 'off'), 'sf1;id=257', scope);
    expect(lookUp(host, padded(257, 'off'))).toBeUndefined();
    // One header more than the resolver reads: no answer from the cache, even a known one.
    expect(lookUp(host, padded(257, 'on'))).toBeUndefined();

    const v1024 = 'v'.repeat(1024);
    applyFresh(host, at([['x-beta', v1024]]), 'sf1;id=1024', scope);
    expect(lookUp(host, at([['x-beta', v1024]]))).toBe('sf1;id=1024');
    const split = at([
      ['x-beta', 'v'.repeat(600)],
      ['x-beta', 'v'.repeat(425)],
    ]);
    applyFresh(host, split, 'sf1;id=1025', scope);
    expect(lookUp(host, split)).toBeUndefined();
    for (const odd of ['caf\u00e9', 'a\u0001b', 'tab\there']) {
      applyFresh(host, at([['x-beta', odd]]), 'sf1;id=odd', scope);
      expect(lookUp(host, at([['x-beta', odd]])), JSON.stringify(odd)).toBeUndefined();
    }
    // Other headers count toward the pairs only, never toward the value bytes.
    const big = at([
      ['x-other', 'o'.repeat(5000)],
      ['x-beta', 'on'],
    ]);
    applyFresh(host, big, 'sf1;id=big', scope);
    expect(lookUp(host, big)).toBe('sf1;id=big');
    expect(host.logged(LogLevel.Error)).toEqual([]);
  });

  it('never traps on a malformed header map', async () => {
    const host = await cacheVm({ ns: 5_000_000_000n });
    const req = at([['x-beta', 'on']]);
    applyFresh(host, req, 'sf1;id=on', 'sc1;g=1;h=x-beta');
    expect(lookUp(host, req)).toBe('sf1;id=on');
    const serialize = host.serializeHeaderPairs;
    for (const garbage of [
      new Uint8Array(0),
      new Uint8Array([1, 2]),
      new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0]),
      serialize([['x-beta', 'on']]).slice(0, 12),
    ]) {
      host.serializeHeaderPairs = () => garbage;
      expect(lookUp(host, req)).toBeUndefined();
    }
    host.serializeHeaderPairs = serialize;
    expect(lookUp(host, req)).toBe('sf1;id=on');
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
