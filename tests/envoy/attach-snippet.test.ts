// The attach-mode snippet: what it holds, that an Envoy with the snippet added passes
// `envoy --mode validate`, and how `steadfast envoy-config --mode attach` delivers keys
// (tests/examples/attach-example.test.ts holds envoy/attach-example.yaml to it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { generateAttachSnippet, parseHostPort } from '../../extproc/src/envoy/attach-snippet.js';
import { run } from '../../extproc/src/cli/main.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { generateSessionKey } from '../../extproc/src/provider/key-files.js';
import { baseObjectsYaml, routesYaml } from '../e2e/support/attach-config.js';
import { filterWasm } from '../support/paths.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

type Node = Record<string, unknown>;

const CONFIG = {
  'base.yaml': baseObjectsYaml([{ address: '127.0.0.2' }], 8080),
  'routes.yaml': routesYaml([
    {
      name: 'shop',
      hostnames: ['shop.example'],
      rules: [{ path: '/retry', retry: { attempts: 2, codes: [503], backoff: '100ms' } }, { path: '/plain' }],
    },
  ]),
};
const table = compileSnapshot(Object.entries(CONFIG).map(([path, text]) => ({ path, text }))).table;
const KEYS = [generateSessionKey(), generateSessionKey()];
const tmp = mkdtempSync(join(tmpdir(), 'steadfast-snippet-'));

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function snippet(options: Partial<Parameters<typeof generateAttachSnippet>[1]> = {}): Node {
  return parse(
    generateAttachSnippet(buildIr(table), {
      extProcAddress: '127.0.0.1:50051',
      wasmPath: 'filter/build/steadfast.wasm',
      ...options,
    }),
  ) as Node;
}

const typed = (n: unknown): Node => (n as Node)['typed_config'] as Node;

/** ext_proc's own configuration, inside its match_delegate when the answer cache is on. */
function extProcOf(filters: Node[]): Node {
  const f = filters.find((x) => JSON.stringify(x).includes('ExternalProcessor')) as Node;
  const inner = typed(f)['extension_config'] as Node | undefined;
  return typed(inner ?? f);
}

const wasmConfig = (f: unknown): Node => typed(f)['config'] as Node;

describe('generateAttachSnippet', () => {
  const s = snippet({ sessionKeys: KEYS });
  const filters = s['http_filters'] as Node[];

  it('adds the lookup, ext_proc (skipped on a known answer), steadfast.wasm, stateful_session and the pin removal', () => {
    expect(filters.map((f) => f['name'])).toEqual([
      'envoy.filters.http.wasm',
      'envoy.filters.http.match_delegate',
      'envoy.filters.http.wasm',
      'envoy.filters.http.stateful_session',
      'envoy.filters.http.header_mutation',
    ]);
    expect(typed(filters[4])).toEqual({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation',
      mutations: { request_mutations: [{ remove: 'x-steadfast-pin' }] },
    });
  });

  it('runs the lookup in the same VM as the filter, and skips ext_proc on the filter state it sets', () => {
    const lookup = wasmConfig(filters[0]);
    const apply = wasmConfig(filters[2]);
    expect(lookup['vm_config']).toEqual(apply['vm_config']);
    expect(lookup['root_id']).not.toBe(apply['root_id']);
    expect(JSON.parse((lookup['configuration'] as Node)['value'] as string)).toEqual({ role: 'lookup' });
    const delegate = typed(filters[1]);
    expect((delegate['extension_config'] as Node)['name']).toBe('envoy.filters.http.ext_proc');
    expect(delegate['xds_matcher']).toEqual({
      matcher_list: {
        matchers: [
          {
            predicate: {
              single_predicate: {
                input: {
                  name: 'steadfast-answer',
                  typed_config: {
                    '@type':
                      'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.FilterStateInput',
                    key: 'wasm.steadfast_answer',
                  },
                },
                value_match: { prefix: 'sf' },
              },
            },
            on_match: {
              action: {
                name: 'skip',
                typed_config: {
                  '@type': 'type.googleapis.com/envoy.extensions.filters.common.matcher.action.v3.SkipFilter',
                },
              },
            },
          },
        ],
      },
    });
  });

  it('leaves the cache out with answerCache: false (ext_proc, steadfast.wasm, stateful_session, pin removal)', () => {
    const off = snippet({ sessionKeys: KEYS, answerCache: false })['http_filters'] as Node[];
    expect(off.map((f) => f['name'])).toEqual([
      'envoy.filters.http.ext_proc',
      'envoy.filters.http.wasm',
      'envoy.filters.http.stateful_session',
      'envoy.filters.http.header_mutation',
    ]);
    expect(JSON.parse((wasmConfig(off[1])['configuration'] as Node)['value'] as string)).toEqual({
      policySource: 'metadata',
      sessionKeys: KEYS,
    });
    expect(extProcOf(off)).toEqual(extProcOf(filters));
  });

  it('says in its comments how many filters it holds and names the current flags', () => {
    const words = ['', '', '', '', 'four', 'five'];
    for (const answerCache of [true, false]) {
      const opts = {
        extProcAddress: '127.0.0.1:50051',
        wasmPath: 'filter/build/steadfast.wasm',
        answerCache,
      };
      const text = generateAttachSnippet(buildIr(table), opts);
      const count = ((parse(text) as Node)['http_filters'] as Node[]).length;
      expect(text).toContain(`put these\n#    ${words[count]} filters, in this order`);
      expect(text).toContain('(steadfast serve --ext-proc-address)');
      expect(text).toContain('(--session-key-file FILE)');
      expect(text).not.toMatch(/--grpc-address|--session-keys\b/);
    }
  });

  it('configures ext_proc to send request headers only, fail open and keep steadfast metadata', () => {
    expect(extProcOf(filters)).toMatchObject({
      grpc_service: { envoy_grpc: { cluster_name: 'steadfast_extproc' } },
      failure_mode_allow: true,
      message_timeout: '0.2s',
      processing_mode: {
        request_header_mode: 'SEND',
        response_header_mode: 'SKIP',
        request_body_mode: 'NONE',
        response_body_mode: 'NONE',
      },
      metadata_options: { receiving_namespaces: { untyped: ['steadfast'] } },
    });
  });

  it('forwards to ext_proc only the request line and the headers the rules match on', () => {
    expect(extProcOf(filters)['forward_rules']).toEqual({
      allowed_headers: { patterns: [':authority', ':method', ':path', 'host'].map((exact) => ({ exact })) },
    });
    const withHeaders = compileSnapshot([
      { path: 'base.yaml', text: CONFIG['base.yaml'] },
      {
        path: 'routes.yaml',
        text: routesYaml([
          {
            name: 'shop',
            hostnames: ['shop.example'],
            rules: [
              { path: '/a', headers: { 'X-Env': 'canary', 'x-tenant': 't1' } },
              { path: '/b', headers: { 'x-env': 'stable' } },
            ],
          },
        ]),
      },
    ]).table;
    const generated = parse(
      generateAttachSnippet(buildIr(withHeaders), { extProcAddress: '127.0.0.1:50051', wasmPath: 'w.wasm' }),
    ) as Node;
    const ext = extProcOf(generated['http_filters'] as Node[]);
    // Lower-case (Envoy's header map is), each once, sorted: the output is stable.
    expect(ext['forward_rules']).toEqual({
      allowed_headers: {
        patterns: [':authority', ':method', ':path', 'host', 'x-env', 'x-tenant'].map((exact) => ({ exact })),
      },
    });
    const all = parse(
      generateAttachSnippet(buildIr(withHeaders), {
        extProcAddress: '127.0.0.1:50051',
        wasmPath: 'w.wasm',
        forwardAllHeaders: true,
      }),
    ) as Node;
    expect(extProcOf(all['http_filters'] as Node[])).not.toHaveProperty('forward_rules');
  });

  it('gives the filter its policy source, the answer cache and the session keys', () => {
    const config = wasmConfig(filters[2])['configuration'] as Node;
    expect(JSON.parse(config['value'] as string)).toEqual({
      policySource: 'metadata',
      sessionKeys: KEYS,
      answerCache: true,
    });
    const noKeys = (wasmConfig((snippet()['http_filters'] as Node[])[2])['configuration'] as Node)[
      'value'
    ] as string;
    expect(JSON.parse(noKeys)).toEqual({ policySource: 'metadata', sessionKeys: [], answerCache: true });
  });

  it('pins sessions through x-steadfast-pin, which clients may not send', () => {
    expect(typed(filters[3])).toMatchObject({
      session_state: {
        name: 'envoy.http.stateful_session.header',
        typed_config: { name: 'x-steadfast-pin' },
      },
      strict: false,
    });
    expect(s['route_config']).toEqual({ internal_only_headers: ['x-steadfast-pin'] });
  });

  it('lists the rules whose routes need the retry backoff', () => {
    expect(s['route_retry_policy']).toEqual({
      retry_back_off: { base_interval: '0.001s', max_interval: '0.001s' },
      retry_host_predicate: [
        {
          name: 'envoy.retry_host_predicates.previous_hosts',
          typed_config: {
            '@type':
              'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
          },
        },
      ],
      host_selection_retry_max_attempts: 5,
    });
    expect(s['retry_routes']).toEqual([
      {
        rule: 'httproute/default/shop/rule/0',
        retry: '2 retries, backoff floor 100 ms',
        hostnames: ['shop.example'],
        gateway_ports: [10000],
        matches: ['PathPrefix /retry'],
      },
    ]);
  });

  it("asks Envoy for the listener's port attributes and lists the metadata each listener may carry", () => {
    expect(extProcOf(filters)['request_attributes']).toEqual([
      'destination.port',
      'xds.listener_metadata.filter_metadata.steadfast.gateway_port',
    ]);
    expect(s['listener_metadata']).toEqual([
      {
        gateway_port: 10000,
        gateway_listeners: ['gateway/default/edge/listener/http'],
        hostnames: ['shop.example'],
        metadata: { filter_metadata: { steadfast: { gateway_port: 10000 } } },
      },
    ]);
  });

  it('turns on graceful ext_proc stream close in the runtime', () => {
    expect(s['layered_runtime']).toEqual({
      layers: [
        {
          name: 'steadfast',
          static_layer: { 'envoy.reloadable_features.ext_proc_graceful_grpc_close': true },
        },
      ],
    });
  });

  it('adds an HTTP/2 cluster for the control service, by IP or by DNS name', () => {
    const [cluster] = s['clusters'] as Node[];
    expect(cluster).toMatchObject({ name: 'steadfast_extproc', type: 'STATIC' });
    expect(JSON.stringify(cluster)).toContain('"http2_protocol_options":{}');
    const dns = (snippet({ extProcAddress: 'steadfast.internal:50051' })['clusters'] as Node[])[0];
    expect(dns).toMatchObject({ type: 'STRICT_DNS' });
    expect(parseHostPort('[::1]:50051')).toEqual({ host: '::1', port: 50051 });
    expect(() => parseHostPort('nope')).toThrow(/HOST:PORT/);
  });
});

describe('an Envoy with the generated snippet added', () => {
  it('passes envoy --mode validate', () => {
    const s = snippet({ sessionKeys: KEYS, wasmPath: filterWasm() });
    const config = {
      layered_runtime: s['layered_runtime'],
      static_resources: {
        listeners: [
          {
            name: 'ingress',
            address: { socket_address: { address: '127.0.0.1', port_value: 10000 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: 'envoy.filters.network.http_connection_manager',
                    typed_config: {
                      '@type':
                        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                      stat_prefix: 'ingress',
                      route_config: {
                        ...(s['route_config'] as Node),
                        virtual_hosts: [
                          {
                            name: 'app',
                            domains: ['*'],
                            routes: [
                              {
                                match: { prefix: '/' },
                                route: { cluster: 'app', retry_policy: s['route_retry_policy'] },
                              },
                            ],
                          },
                        ],
                      },
                      http_filters: [...(s['http_filters'] as Node[]), s['router']],
                    },
                  },
                ],
              },
            ],
          },
        ],
        clusters: [
          {
            name: 'app',
            type: 'STATIC',
            outlier_detection: s['cluster_outlier_detection'],
            circuit_breakers: s['cluster_circuit_breakers'],
            typed_extension_protocol_options: s['cluster_typed_extension_protocol_options'],
            load_assignment: {
              cluster_name: 'app',
              endpoints: [
                {
                  lb_endpoints: [
                    { endpoint: { address: { socket_address: { address: '127.0.0.2', port_value: 8080 } } } },
                  ],
                },
              ],
            },
          },
          ...(s['clusters'] as Node[]),
        ],
      },
    };
    const path = join(tmp, 'with-snippet.yaml');
    writeFileSync(path, stringify(config));
    const r = validateEnvoyConfig(path);
    expect(r.output).toContain('OK');
    expect(r.ok).toBe(true);
  });
});

describe('steadfast envoy-config --mode attach', () => {
  const dir = join(tmp, 'config');
  const capture = async (args: string[]) => {
    let out = '';
    let err = '';
    const code = await run(args, { out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  };

  it('reads the session keys from a key file into the filter configuration', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(CONFIG)) writeFileSync(join(dir, name), text);
    const keyFile = join(tmp, 'keys');
    writeFileSync(keyFile, `# newest first\n${KEYS[0]}\n\n${KEYS[1]}\n`);
    const r = await capture([
      'envoy-config',
      '--config',
      dir,
      '--mode',
      'attach',
      '--session-key-file',
      keyFile,
    ]);
    expect(r.code).toBe(0);
    const filters = (parse(r.out) as Node)['http_filters'] as Node[];
    const value = (wasmConfig(filters[2])['configuration'] as Node)['value'] as string;
    expect(JSON.parse(value)).toEqual({ policySource: 'metadata', sessionKeys: KEYS, answerCache: true });
    expect(r.out).toContain('holds 2 session key(s): treat this output as a secret');
  });

  it('leaves forward_rules out with --forward-all-headers', async () => {
    const ext = async (...extra: string[]) => {
      const r = await capture(['envoy-config', '--config', dir, '--mode', 'attach', ...extra]);
      expect(r.code).toBe(0);
      return extProcOf((parse(r.out) as Node)['http_filters'] as Node[]);
    };
    expect(await ext()).toHaveProperty('forward_rules');
    expect(await ext('--forward-all-headers')).not.toHaveProperty('forward_rules');
  });

  it('leaves the answer cache out with --answer-cache off, and refuses other values', async () => {
    const names = async (...extra: string[]) => {
      const r = await capture(['envoy-config', '--config', dir, '--mode', 'attach', ...extra]);
      expect(r.code).toBe(0);
      return ((parse(r.out) as Node)['http_filters'] as Node[]).map((f) => f['name']);
    };
    expect(await names('--answer-cache', 'off')).toEqual([
      'envoy.filters.http.ext_proc',
      'envoy.filters.http.wasm',
      'envoy.filters.http.stateful_session',
      'envoy.filters.http.header_mutation',
    ]);
    expect(await names('--answer-cache', 'on')).toEqual(await names());
    const bad = await capture([
      'envoy-config',
      '--config',
      dir,
      '--mode',
      'attach',
      '--answer-cache',
      'maybe',
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('--answer-cache must be on or off');
  });

  it('refuses a bad key file, naming file and line', async () => {
    const keyFile = join(tmp, 'bad-keys');
    writeFileSync(keyFile, `${KEYS[0]}\nnot-a-key\n`);
    const r = await capture([
      'envoy-config',
      '--config',
      dir,
      '--mode',
      'attach',
      '--session-key-file',
      keyFile,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${keyFile}:2`);
    expect(r.out).toBe('');
  });
});
