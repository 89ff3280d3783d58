// The ABI layer against the emulator: lifecycle, configuration, properties, logging,
// metrics — and that no input, however broken, traps the VM.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LogLevel, ProxyWasmHost } from '../emulator/proxy-wasm-host.js';
import { filterWasm } from '../support/paths.js';
import { METADATA_POLICY, ROUTE_POLICY, startedHost } from './filter-harness.js';

const GET: Array<[string, string]> = [
  [':method', 'GET'],
  [':path', '/'],
  [':authority', 'example.com'],
];
const TOKEN = 'sf1;id=httproute/default/shop/rule/0;k=h;ra=2;rc=500';

// What Envoy 1.40 provides to a proxy-wasm module of ABI 0.2.1 (env) and of WASI.
const ENVOY_HOST_FUNCTIONS = new Set([
  'env.proxy_log',
  'env.proxy_get_log_level',
  'env.proxy_get_current_time_nanoseconds',
  'env.proxy_set_tick_period_milliseconds',
  'env.proxy_get_buffer_bytes',
  'env.proxy_set_buffer_bytes',
  'env.proxy_get_header_map_pairs',
  'env.proxy_set_header_map_pairs',
  'env.proxy_get_header_map_value',
  'env.proxy_add_header_map_value',
  'env.proxy_replace_header_map_value',
  'env.proxy_remove_header_map_value',
  'env.proxy_get_header_map_size',
  'env.proxy_get_property',
  'env.proxy_set_property',
  'env.proxy_send_local_response',
  'env.proxy_define_metric',
  'env.proxy_increment_metric',
  'env.proxy_record_metric',
  'env.proxy_get_metric',
  'env.proxy_continue_stream',
  'env.proxy_close_stream',
  'env.proxy_set_effective_context',
  'env.proxy_done',
  'env.proxy_http_call',
  'env.proxy_get_shared_data',
  'env.proxy_set_shared_data',
  'wasi_snapshot_preview1.proc_exit',
  'wasi_snapshot_preview1.random_get',
  'wasi_snapshot_preview1.fd_write',
  'wasi_snapshot_preview1.clock_time_get',
]);

describe('module shape', () => {
  it('imports only host functions Envoy provides', async () => {
    const host = await ProxyWasmHost.load(filterWasm());
    const imported = host.imports.map((i) => `${i.module}.${i.name}`);
    expect(imported.filter((name) => !ENVOY_HOST_FUNCTIONS.has(name))).toEqual([]);
    // AssemblyScript's defaults would import these; Envoy has none of them (docs/architecture.md, Envoy fact 3).
    expect(imported).not.toContain('env.abort');
    expect(imported).not.toContain('env.seed');
    expect(imported).not.toContain('env.Date.now');
  });

  it('exports the ABI 0.2.1 entry points and the reactor initializer', async () => {
    const host = await ProxyWasmHost.load(filterWasm());
    for (const name of [
      'proxy_abi_version_0_2_1',
      'proxy_on_memory_allocate',
      'proxy_on_context_create',
      'proxy_on_vm_start',
      'proxy_on_configure',
      'proxy_on_request_headers',
      'proxy_on_response_headers',
      'proxy_on_done',
      'proxy_on_log',
      'proxy_on_delete',
      '_initialize',
    ]) {
      expect(host.hasExport(name), name).toBe(true);
    }
  });

  it('makes no host call before the host starts it', async () => {
    const host = await ProxyWasmHost.load(filterWasm());
    expect([...host.calls.keys()]).toEqual([]);
  });
});

describe('configuration', () => {
  it('accepts no configuration and uses defaults', async () => {
    const host = await startedHost();
    expect(host.logged(LogLevel.Error)).toEqual([]);
  });

  it.each([
    ['not JSON', '{debug: true', 'not a JSON object'],
    ['a JSON array', '[1,2]', 'not a JSON object'],
    ['a wrong type', '{"debug": "yes"}', 'debug: must be true or false'],
    ['an unknown policy source', '{"policySource": "cookie"}', 'policySource: "cookie" is not one of'],
    ['a non-string key', '{"sessionKeys": [1]}', 'sessionKeys[0]'],
    ['deep nesting', `{"x": ${'['.repeat(100)}${']'.repeat(100)}}`, 'not a JSON object'],
  ])('refuses %s with a clear error', async (_what, config, message) => {
    const host = await ProxyWasmHost.load(filterWasm(), { pluginConfig: config });
    expect(host.start()).toBe(false);
    const errors = host.logged(LogLevel.Error);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(message);
  });

  it('warns about unknown keys but accepts the configuration', async () => {
    const host = await startedHost({ pluginConfig: '{"debug": false, "retryFloor": 3}' });
    expect(host.logged(LogLevel.Warn).join('\n')).toContain('retryFloor');
  });

  it('survives a reconfiguration and keeps its metrics', async () => {
    const host = await startedHost();
    expect(host.configure('{"debug": true}')).toBe(true);
    expect(host.configure('{"debug": 1}')).toBe(false);
    const s = host.newStream({ [METADATA_POLICY]: TOKEN });
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    // The refused configuration did not replace the good one: debug is still on.
    expect(s.responseHeader('x-steadfast-policy')).toBe(TOKEN);
  });
});

describe('policy lookup', () => {
  it('reads the token from ext_proc metadata and echoes it in debug mode', async () => {
    const host = await startedHost({ pluginConfig: '{"debug": true}' });
    const s = host.newStream({ [METADATA_POLICY]: TOKEN });
    expect(s.sendRequestHeaders(GET)).toBe(0);
    expect(s.sendResponseHeaders([[':status', '200']])).toBe(0);
    expect(s.responseHeader('x-steadfast-policy')).toBe(TOKEN);
    expect(host.metric('steadfast_policy_applied_total')).toBe(1n);
    s.complete();
  });

  it('does not echo the token unless debug is on', async () => {
    const host = await startedHost();
    const s = host.newStream({ [METADATA_POLICY]: TOKEN });
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    expect(s.responseHeader('x-steadfast-policy')).toBeUndefined();
  });

  it('falls back to route metadata in auto mode', async () => {
    const host = await startedHost({ pluginConfig: '{"debug": true}' });
    const s = host.newStream({ [ROUTE_POLICY]: TOKEN });
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    expect(s.responseHeader('x-steadfast-policy')).toBe(TOKEN);
  });

  it('prefers ext_proc metadata over route metadata in auto mode', async () => {
    const host = await startedHost({ pluginConfig: '{"debug": true}' });
    const s = host.newStream({ [ROUTE_POLICY]: 'sf1;id=route;k=h', [METADATA_POLICY]: TOKEN });
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    expect(s.responseHeader('x-steadfast-policy')).toBe(TOKEN);
  });

  it('reads only route metadata when configured for gateway mode', async () => {
    const host = await startedHost({ pluginConfig: '{"debug": true, "policySource": "route"}' });
    const s = host.newStream({ [METADATA_POLICY]: TOKEN });
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    expect(s.responseHeader('x-steadfast-policy')).toBeUndefined();
    expect(host.metric('steadfast_policy_missing_total')).toBe(1n);
  });

  it('costs a request without policy only a few host calls', async () => {
    const host = await startedHost();
    const before = [...host.calls.values()].reduce((a, b) => a + b, 0);
    const s = host.newStream();
    s.sendRequestHeaders(GET);
    s.sendResponseHeaders([[':status', '200']]);
    s.complete();
    const calls = [...host.calls.values()].reduce((a, b) => a + b, 0) - before;
    // Pin removal both ways, two property looks, two counters: nothing else.
    expect(calls).toBeLessThanOrEqual(6);
  });

  it('counts a request without policy and changes nothing', async () => {
    const host = await startedHost();
    const s = host.newStream();
    s.sendRequestHeaders(GET);
    expect(s.requestHeaders).toEqual(GET);
    expect(host.metric('steadfast_requests_total')).toBe(1n);
    expect(host.metric('steadfast_policy_missing_total')).toBe(1n);
  });
});

describe('hostile and broken input never traps', () => {
  const garbage: Array<[string, Uint8Array | string]> = [
    ['empty', ''],
    ['random bytes', randomBytes(512)],
    ['invalid UTF-8', new Uint8Array([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82])],
    ['a double, as Envoy sends metadata numbers', new Uint8Array(new Float64Array([3.5]).buffer)],
    ['64 KiB of token-like text', `sf1;id=${'a'.repeat(65536)}`],
    ['a number overflowing i32', 'sf1;id=x;k=h;ra=99999999999'],
    ['a negative number', 'sf1;id=x;k=h;ra=-1'],
    ['empty fields', 'sf1;;;=;'],
    ['a bad escape', 'sf1;id=%Z1;k=h'],
    ['a truncated escape', 'sf1;id=ab%4'],
    ['a status code out of range', 'sf1;id=x;k=h;ra=1;rc=500,700'],
    ['an unknown gRPC reason', 'sf1;id=x;k=g;ra=1;rg=unavailable,bogus'],
    ['another version', 'sf9;id=x;k=h'],
    ['a session without a name', 'sf1;id=x;k=h;st=c;sp=/'],
    ['NUL bytes', 'sf1;id=\0\0;k=h'],
  ];

  it.each(garbage)('%s as the policy property', async (_what, value) => {
    const host = await startedHost({ pluginConfig: '{"debug": true}' });
    const s = host.newStream({ [METADATA_POLICY]: value });
    expect(s.sendRequestHeaders(GET)).toBe(0);
    expect(s.sendResponseHeaders([[':status', '200']])).toBe(0);
    s.complete();
    expect(host.metric('steadfast_policy_invalid_total')).toBe(1n);
    // A malformed token changes no router header.
    expect(s.requestHeaders.filter(([k]) => k.startsWith('x-envoy-'))).toEqual([]);
  });

  it('survives thousands of mutated tokens', async () => {
    const host = await startedHost();
    const base = Buffer.from(
      'sf1;id=httproute/default/shop/rule/0;k=h;ra=3;rc=500,503;rb=200;tr=400;tb=200;st=c;sn=s;sp=/',
    );
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    for (let i = 0; i < 3000; i++) {
      const b = Buffer.from(base);
      for (let j = next() % 6; j >= 0; j--) b[next() % b.length] = next() % 256;
      const s = host.newStream({ [METADATA_POLICY]: b.subarray(0, next() % (b.length + 1)) });
      s.sendRequestHeaders(GET);
      s.sendResponseHeaders([[':status', '503']]);
      s.complete();
    }
    expect(host.metric('steadfast_requests_total')).toBe(3000n);
  });

  it('ignores callbacks for contexts it never created', async () => {
    const host = await startedHost();
    expect(host.call(undefined, 'proxy_on_request_headers', 999, 0, 1)).toBe(0);
    expect(host.call(undefined, 'proxy_on_response_headers', 999, 0, 1)).toBe(0);
    host.call(undefined, 'proxy_on_done', 999);
    host.call(undefined, 'proxy_on_log', 999);
    host.call(undefined, 'proxy_on_delete', 999);
    expect(host.call(undefined, 'proxy_on_configure', 12345, 0)).toBe(0);
    host.call(undefined, 'proxy_on_context_create', 77, 4242);
    expect(host.call(undefined, 'proxy_on_request_headers', 77, 0, 1)).toBe(0);
  });

  it('keeps memory bounded over many requests', async () => {
    const host = await startedHost();
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) {
        const s = host.newStream({ [METADATA_POLICY]: `${TOKEN};tr=${i % 1000}` });
        s.sendRequestHeaders(GET);
        s.sendResponseHeaders([[':status', '200']]);
        s.complete();
      }
    };
    run(2000);
    const after = host.memoryBytes();
    run(20000);
    expect(host.memoryBytes()).toBe(after);
  });
});

describe('logging', () => {
  it('writes nothing below the host log level', async () => {
    const host = await startedHost({ logLevel: LogLevel.Error });
    const s = host.newStream({ [METADATA_POLICY]: 'garbage' });
    s.sendRequestHeaders(GET);
    expect(host.logs).toEqual([]);
    expect(host.calls.get('proxy_log')).toBeUndefined();
  });

  it('warns about a malformed token when warnings are on', async () => {
    const host = await startedHost({ logLevel: LogLevel.Warn });
    const s = host.newStream({ [METADATA_POLICY]: 'garbage' });
    s.sendRequestHeaders(GET);
    expect(host.logged(LogLevel.Warn)).toEqual(['steadfast: ignoring a malformed policy token']);
  });
});
