// The gateway's HTTP filter chain: steadfast.wasm (policy from route metadata, sessions)
// → stateful_session (pins to the host the filter names in x-steadfast-pin) → router; and
// steadfast.wasm again as an upstream filter, where it holds each retry until the backoff
// floor has passed (filter/assembly/retry/retry-gate.ts) — on the clusters of rules with
// a backoff in gateway mode, on the router (every cluster) in attach mode.
import {
  PIN_HEADER,
  TYPE_HEADER_SESSION_STATE,
  TYPE_ROUTER,
  TYPE_STATEFUL_SESSION,
  TYPE_STRING_VALUE,
  TYPE_UPSTREAM_CODEC,
  TYPE_WASM,
} from './envoy-names.js';
import type { Json } from '../json.js';

export interface FilterOptions {
  /** Path of steadfast.wasm as Envoy sees it (relative paths resolve against Envoy's working directory). */
  readonly wasmPath: string;
  /** Base64 session keys; the first seals, all open. */
  readonly sessionKeys: readonly string[];
  /** Adds x-steadfast-policy to responses: for trying things out, never production. */
  readonly debug?: boolean;
}

/** The filter's JSON configuration (filter/assembly/config/plugin-config.ts reads it). */
export function filterConfiguration(options: FilterOptions): string {
  return JSON.stringify({
    policySource: 'route',
    sessionKeys: [...options.sessionKeys],
    ...(options.debug ? { debug: true } : {}),
  });
}

/** The steadfast wasm filter: one VM for both roles, as their vm_config is the same. */
export function steadfastWasmFilter(name: string, configuration: string, wasmPath: string): Json {
  return {
    name: 'envoy.filters.http.wasm',
    typed_config: {
      '@type': TYPE_WASM,
      config: {
        name,
        root_id: 'steadfast',
        configuration: { '@type': TYPE_STRING_VALUE, value: configuration },
        vm_config: {
          vm_id: 'steadfast',
          runtime: 'envoy.wasm.runtime.v8',
          code: { local: { filename: wasmPath } },
        },
      },
    },
  };
}

/** Pins to the host the filter names in x-steadfast-pin (base64 `ip:port`). */
export function statefulSessionFilter(): Json {
  return {
    name: 'envoy.filters.http.stateful_session',
    typed_config: {
      '@type': TYPE_STATEFUL_SESSION,
      session_state: {
        name: 'envoy.http.stateful_session.header',
        typed_config: { '@type': TYPE_HEADER_SESSION_STATE, name: PIN_HEADER },
      },
      // A pinned host that is gone falls back to load balancing (GEP-1619's SHOULD).
      strict: false,
    },
  };
}

/** The filter's upstream half, which holds each retry until the backoff floor, then the codec. */
export function backoffFloorFilters(wasmPath: string): Json[] {
  return [
    steadfastWasmFilter('steadfast-upstream', JSON.stringify({ role: 'upstream' }), wasmPath),
    { name: 'envoy.filters.http.upstream_codec', typed_config: { '@type': TYPE_UPSTREAM_CODEC } },
  ];
}

/**
 * The router with the filter's upstream half on every cluster: for an Envoy whose clusters
 * steadfast does not own (attach mode). Gateway mode puts the upstream half only on the
 * clusters of rules with a backoff (rule-clusters.ts).
 */
export function routerFilter(wasmPath: string): Json {
  return {
    name: 'envoy.filters.http.router',
    typed_config: { '@type': TYPE_ROUTER, upstream_http_filters: backoffFloorFilters(wasmPath) },
  };
}

export function gatewayHttpFilters(options: FilterOptions): Json[] {
  return [
    steadfastWasmFilter('steadfast', filterConfiguration(options), options.wasmPath),
    statefulSessionFilter(),
    { name: 'envoy.filters.http.router', typed_config: { '@type': TYPE_ROUTER } },
  ];
}
