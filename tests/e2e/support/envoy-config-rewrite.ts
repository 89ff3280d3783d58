// Points a checked-in Envoy configuration at what a test started: ephemeral ports for
// the admin and listeners, the test's backends and control service for named clusters,
// and the built filter by absolute path. The rest of the configuration is kept as is.
import { parse, stringify } from 'yaml';
import { filterWasm } from '../../support/paths.js';
import { type FilterBuildName, nativeFilterPath } from '../../support/filter-builds.js';
import { nativeFilterConfig } from '../../../extproc/src/envoy/http-filters.js';
import type { Json } from '../../../extproc/src/json.js';

export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

export interface RewriteOptions {
  /** Cluster name → the endpoints it should have. Clusters not named keep theirs. */
  readonly clusters?: Readonly<Record<string, readonly Endpoint[]>>;
  /** Replaces the downstream steadfast filter's JSON configuration (a string). */
  readonly filterConfig?: string;
  /** Replaces the ext_proc filter's forward_rules (what the snippet generates for the test's rules). */
  readonly extProcForwardRules?: Readonly<Record<string, unknown>>;
  /** Clusters that speak HTTP/2 (prior knowledge) to their endpoints, as a gRPC backend needs. */
  readonly http2Clusters?: readonly string[];
  /**
   * false: the answer cache off, as `envoy-config --mode attach --answer-cache off` prints it
   * (no lookup filter, ext_proc unwrapped, the downstream filter without `answerCache`).
   * Otherwise the configuration's own; a replaced filterConfig keeps its `answerCache`.
   */
  readonly answerCache?: boolean;
  /** The filter build Envoy loads: steadfast.wasm (the configuration's own) or the native module. */
  readonly build?: FilterBuildName;
}

type Node = Record<string, unknown>;

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(v: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(v)) {
    for (const x of v) walk(x, visit);
  } else if (isNode(v)) {
    visit(v);
    for (const x of Object.values(v)) walk(x, visit);
  }
}

export function rewriteEnvoyConfig(yamlText: string, options: RewriteOptions = {}): string {
  const doc = parse(yamlText) as Node;
  const admin = doc['admin'] as Node | undefined;
  const adminSocket = (admin?.['address'] as Node | undefined)?.['socket_address'] as Node | undefined;
  if (adminSocket) adminSocket['port_value'] = 0;

  const statics = (doc['static_resources'] ?? {}) as Node;
  for (const listener of (statics['listeners'] ?? []) as Node[]) {
    const socket = (listener['address'] as Node | undefined)?.['socket_address'] as Node | undefined;
    if (socket) socket['port_value'] = 0;
  }
  for (const cluster of (statics['clusters'] ?? []) as Node[]) {
    if (options.http2Clusters?.includes(cluster['name'] as string)) {
      cluster['typed_extension_protocol_options'] = {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
          explicit_http_config: { http2_protocol_options: {} },
        },
      };
    }
    const endpoints = options.clusters?.[cluster['name'] as string];
    if (!endpoints) continue;
    cluster['load_assignment'] = {
      cluster_name: cluster['name'],
      endpoints: [
        {
          lb_endpoints: endpoints.map((e) => ({
            endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
          })),
        },
      ],
    };
  }
  walk(doc, (n) => {
    const local = n['local'] as Node | undefined;
    if (typeof local?.['filename'] === 'string' && local['filename'].endsWith('.wasm')) {
      local['filename'] = filterWasm();
    }
    if (options.extProcForwardRules !== undefined && n['name'] === 'envoy.filters.http.ext_proc') {
      (n['typed_config'] as Node)['forward_rules'] = options.extProcForwardRules;
    }
    // Only the downstream filter: the upstream and lookup ones (`role`) keep their configuration.
    if (n['name'] === 'envoy.filters.http.wasm') {
      const wasm = (n['typed_config'] as Node)['config'] as Node;
      const config = wasm['configuration'] as Node;
      const before = String(config['value']);
      if (before.includes('"role"')) return;
      const value = JSON.parse(options.filterConfig ?? before) as Node;
      const cached = (JSON.parse(before) as Node)['answerCache'];
      if (options.answerCache === false) delete value['answerCache'];
      else if (cached !== undefined && value['answerCache'] === undefined) value['answerCache'] = cached;
      config['value'] = JSON.stringify(value);
    }
  });
  if (options.answerCache === false) walk(doc, withoutAnswerCache);
  if (options.build === 'native') walk(doc, toNativeFilter);
  return stringify(doc);
}

/** The same filter instance as the native module, as `envoy-config --filter native` writes it. */
function toNativeFilter(n: Node): void {
  const typed = n['typed_config'] as Node | undefined;
  if (typed?.['@type'] !== 'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm') return;
  n['typed_config'] = nativeFilterConfig(
    (typed['config'] as Node)['configuration'] as Json,
    nativeFilterPath(),
  );
}

/** Drops the lookup filter and unwraps ext_proc from its match_delegate, in every filter list. */
function withoutAnswerCache(n: Node): void {
  const filters = n['http_filters'];
  if (!Array.isArray(filters)) return;
  n['http_filters'] = (filters as Node[])
    .filter((f) => !String(JSON.stringify(f)).includes('"role\\":\\"lookup\\"'))
    .map((f) => {
      const inner = (f['typed_config'] as Node | undefined)?.['extension_config'] as Node | undefined;
      return f['name'] === 'envoy.filters.http.match_delegate' &&
        inner?.['name'] === 'envoy.filters.http.ext_proc'
        ? inner
        : f;
    });
}
