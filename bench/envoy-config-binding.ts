// Points an Envoy configuration at what the benchmark started: ephemeral admin and
// listener ports, the benchmark's backends, its control service, and the built filter.
// Port 18080 in bench/configs is the backends' placeholder; a cluster named `app` gets
// the backends whatever it held (envoy/attach-example.yaml names its own).
import { parse, stringify } from 'yaml';
import { TYPE_WASM } from '../extproc/src/envoy/envoy-names.js';
import { nativeFilterConfig } from '../extproc/src/envoy/http-filters.js';
import type { Json } from '../extproc/src/json.js';

export const BACKEND_PLACEHOLDER_PORT = 18080;

export interface ConfigBinding {
  readonly backendAddresses: readonly string[];
  readonly backendPort: number;
  readonly extProcPort?: number;
  readonly wasmPath: string;
  /** The native filter's absolute path (filter/build/libsteadfast.so). */
  readonly nativePath: string;
  /** `native`: every steadfast wasm filter runs as the native module instead. */
  readonly build?: 'native';
  /** Replaces the downstream steadfast filter's JSON configuration. */
  readonly filterConfig?: string;
  /** false: the attach answer cache taken out (no lookup filter, ext_proc unwrapped). */
  readonly answerCache?: boolean;
}

/** Drops the answer cache's lookup filter and unwraps ext_proc from its match_delegate. */
function withoutAnswerCache(n: Node): void {
  const filters = n['http_filters'];
  if (!Array.isArray(filters)) return;
  n['http_filters'] = (filters as Node[])
    .filter((f) => !JSON.stringify(f).includes('"name":"steadfast-lookup"'))
    .map((f) => {
      const inner = (f['typed_config'] as Node | undefined)?.['extension_config'] as Node | undefined;
      return f['name'] === 'envoy.filters.http.match_delegate' &&
        inner?.['name'] === 'envoy.filters.http.ext_proc'
        ? inner
        : f;
    });
}

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

function walk(v: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(v)) for (const x of v) walk(x, visit);
  else if (isNode(v)) {
    visit(v);
    for (const x of Object.values(v)) walk(x, visit);
  }
}

function endpointsOf(b: ConfigBinding, port: number): Node[] {
  return [
    {
      lb_endpoints: b.backendAddresses.map((address) => ({
        endpoint: { address: { socket_address: { address, port_value: port } } },
      })),
    },
  ];
}

export function bindEnvoyConfig(yamlText: string, b: ConfigBinding): string {
  const doc = parse(yamlText) as Node;
  const statics = (doc['static_resources'] ?? {}) as Node;
  const adminSocket = ((doc['admin'] as Node | undefined)?.['address'] as Node | undefined)?.[
    'socket_address'
  ] as Node | undefined;
  if (adminSocket) adminSocket['port_value'] = 0;
  for (const listener of (statics['listeners'] ?? []) as Node[]) {
    const socket = (listener['address'] as Node | undefined)?.['socket_address'] as Node | undefined;
    if (socket) socket['port_value'] = 0;
  }
  for (const cluster of (statics['clusters'] ?? []) as Node[]) {
    if (cluster['name'] === 'app') {
      cluster['load_assignment'] = { cluster_name: 'app', endpoints: endpointsOf(b, b.backendPort) };
    } else if (cluster['name'] === 'steadfast_extproc') {
      if (b.extProcPort === undefined) throw new Error('this configuration needs a control service');
      cluster['load_assignment'] = {
        cluster_name: 'steadfast_extproc',
        endpoints: [
          {
            lb_endpoints: [
              {
                endpoint: {
                  address: { socket_address: { address: '127.0.0.1', port_value: b.extProcPort } },
                },
              },
            ],
          },
        ],
      };
    }
  }
  walk(statics, (n) => {
    const socket = n['socket_address'];
    if (isNode(socket) && socket['port_value'] === BACKEND_PLACEHOLDER_PORT)
      socket['port_value'] = b.backendPort;
    const local = n['local'];
    if (isNode(local) && typeof local['filename'] === 'string' && local['filename'].endsWith('.wasm')) {
      local['filename'] = b.wasmPath;
    }
    if (isNode(local) && typeof local['filename'] === 'string' && local['filename'].endsWith('.so')) {
      local['filename'] = b.nativePath;
    }
    // The downstream filter's configuration (the upstream one is named steadfast-upstream).
    if (b.filterConfig !== undefined && n['name'] === 'steadfast' && isNode(n['configuration'])) {
      n['configuration']['value'] = b.filterConfig;
    }
  });
  if (b.answerCache === false) walk(statics, withoutAnswerCache);
  if (b.build === 'native') {
    walk(statics, (n) => {
      const typed = n['typed_config'];
      if (isNode(typed) && typed['@type'] === TYPE_WASM && isNode(typed['config'])) {
        n['typed_config'] = nativeFilterConfig(typed['config']['configuration'] as Json, b.nativePath);
      }
    });
  }
  return stringify(doc);
}
