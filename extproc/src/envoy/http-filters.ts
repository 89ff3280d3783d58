// The gateway's HTTP filter chain: steadfast.wasm (sessions; policy from route metadata)
// → stateful_session (pins to the host the filter names in x-steadfast-pin) → the idempotent
// methods' `reset` (a native header_mutation) → router, the first two switched on only by
// session routes, the third only by routes whose retries differ by method; and steadfast.wasm again as an upstream
// filter, where it holds each retry until the backoff floor has passed — on the clusters
// of rules with a backoff in gateway mode, on the router (every cluster) in attach mode.
import {
  ATTEMPT_COUNT_HEADER,
  IDEMPOTENT_RESET_FILTER_NAME,
  PIN_HEADER,
  STATEFUL_SESSION_FILTER_NAME,
  STEADFAST_FILTER_NAME,
  TYPE_EXTENSION_WITH_MATCHER,
  TYPE_FILTER_CONFIG,
  TYPE_HEADER_MUTATION,
  TYPE_REQUEST_HEADER_INPUT,
  TYPE_SKIP_FILTER,
  TYPE_HEADER_SESSION_STATE,
  TYPE_ROUTER,
  TYPE_STATEFUL_SESSION,
  TYPE_STRING_VALUE,
  TYPE_UPSTREAM_CODEC,
  TYPE_WASM,
  TYPE_DYNAMIC_MODULE_FILTER,
  RETRY_ON_HEADER,
} from './envoy-names.js';
import { IDEMPOTENT_METHODS } from '../ir/router-plan.js';
import type { Json } from '../json.js';

export interface FilterOptions {
  /**
   * The filter build Envoy loads, as Envoy sees its path (relative paths resolve against
   * Envoy's working directory): steadfast.wasm, or the native libsteadfast.so.
   */
  readonly wasmPath: string;
  /** Base64 session keys; the first seals, all open. */
  readonly sessionKeys: readonly string[];
  /** Adds x-steadfast-policy to responses: for trying things out, never production. */
  readonly debug?: boolean;
}

/**
 * The downstream filter's JSON configuration in gateway mode (filter/assembly/config/
 * plugin-config.ts reads it): the policy from route metadata, and no router headers, as
 * the routes carry the retries and timeouts. Debug output is the route's own response
 * header (route-action.ts), so the filter need not run for it.
 */
function filterConfiguration(options: FilterOptions): string {
  return JSON.stringify({
    policySource: 'route',
    gatewayRoutes: true,
    sessionKeys: [...options.sessionKeys],
  });
}

/** Whether `path` names the native build of the filter (an Envoy dynamic module), not steadfast.wasm. */
export function isNativeFilter(path: string): boolean {
  return path.endsWith('.so');
}

/**
 * One instance of the steadfast filter, from the build `filterPath` names: steadfast.wasm in
 * Envoy's wasm VM, or libsteadfast.so, the same filter compiled to a native dynamic module
 * (docs/native-filter.md). Both read the same configuration. Instances share one VM (one
 * module instance) per worker, and its memory: attach mode's answer cache; each has a root
 * context of its own.
 */
export function steadfastFilter(
  name: string,
  configuration: string,
  filterPath: string,
  rootId = 'steadfast',
): Json {
  if (isNativeFilter(filterPath)) return steadfastNativeFilter(configuration, filterPath);
  return {
    name: 'envoy.filters.http.wasm',
    typed_config: {
      '@type': TYPE_WASM,
      config: {
        name,
        root_id: rootId,
        configuration: { '@type': TYPE_STRING_VALUE, value: configuration },
        vm_config: {
          vm_id: 'steadfast',
          runtime: 'envoy.wasm.runtime.v8',
          code: { local: { filename: filterPath } },
        },
      },
    },
  };
}

/**
 * The native build as Envoy loads it. Its counters keep the wasm filter's names
 * (`wasmcustom.steadfast_*`), so a switch of builds changes no dashboard.
 */
function steadfastNativeFilter(configuration: string, modulePath: string): Json {
  return {
    name: 'envoy.filters.http.wasm',
    typed_config: nativeFilterConfig({ '@type': TYPE_STRING_VALUE, value: configuration }, modulePath),
  };
}

/**
 * The native filter's typed_config, from the filter's configuration (a StringValue, as the
 * wasm filter's `configuration` holds it) — also how a wasm filter of a hand-written Envoy
 * configuration becomes the native one (the tests' and the benchmark's).
 */
export function nativeFilterConfig(configuration: Json, modulePath: string): Json {
  return {
    '@type': TYPE_DYNAMIC_MODULE_FILTER,
    dynamic_module_config: {
      name: 'steadfast',
      metrics_namespace: 'wasmcustom',
      module: { local: { filename: modulePath } },
    },
    filter_name: 'steadfast',
    filter_config: configuration,
  };
}

/** Pins to the host the filter names in x-steadfast-pin (base64 `ip:port`). */
export function statefulSessionFilter(): Json {
  return {
    name: STATEFUL_SESSION_FILTER_NAME,
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

/**
 * Drops the pin once stateful_session has read it, so no backend sees it — for an Envoy
 * whose routes steadfast does not own (gateway mode's session routes remove it themselves).
 */
export function pinRemovalFilter(): Json {
  return {
    name: 'envoy.filters.http.header_mutation',
    typed_config: {
      '@type': TYPE_HEADER_MUTATION,
      mutations: { request_mutations: [{ remove: PIN_HEADER }] },
    },
  };
}

/**
 * What a session route says to switch on gateway mode's filter and stateful_session, which
 * the listener holds off by default (`gatewayHttpFilters`): a FilterConfig with an empty
 * `config` enables a filter without configuring it. Every other route says nothing, costs
 * Envoy nothing to build, and its requests never enter the VM.
 */
export function sessionRouteFilters(): Json {
  const on = { '@type': TYPE_FILTER_CONFIG, config: {} };
  return { [STEADFAST_FILTER_NAME]: on, [STATEFUL_SESSION_FILTER_NAME]: on };
}

/**
 * What a route whose retries differ by method says to switch on the filter that adds `reset`
 * for the idempotent methods (idempotentResetFilter), which the listener holds off. A route
 * configuration most of whose routes want it says it once instead (resetSwitch).
 */
export function resetByMethodRouteFilters(): Json {
  return { [IDEMPOTENT_RESET_FILTER_NAME]: { '@type': TYPE_FILTER_CONFIG, config: {} } };
}

/** What a route says to keep that filter off where its route configuration switched it on. */
export function resetOffRouteFilters(): Json {
  return { [IDEMPOTENT_RESET_FILTER_NAME]: { '@type': TYPE_FILTER_CONFIG, disabled: true } };
}

/**
 * Where a route configuration leaves the `reset` filter: `off` (the listener's default: a route
 * that wants it says on), `on` (switched on once: a route that does not want it says off), or
 * `explicit` (every route says its own switch, right under either: what a VHDS stream holds
 * while its route configuration's switch changes, xds/ads-server.ts).
 */
export type ResetDefault = 'off' | 'on' | 'explicit';

/**
 * The `reset` filter's switch on one route: on where the retries differ by method, off
 * elsewhere. Said on each route that differs from its route configuration: Envoy builds a
 * route's switch for every route of the table on every update, so a table most of whose
 * routes want the filter switches it on once and the others say off (reset-default.ts).
 */
export function resetSwitch(wanted: boolean, configuration: ResetDefault): Json {
  if (configuration !== 'explicit' && wanted === (configuration === 'on')) return {};
  return wanted ? resetByMethodRouteFilters() : resetOffRouteFilters();
}

/** One predicate: the request's `:method` is exactly `method`. */
function methodIs(method: string): Json {
  return {
    single_predicate: {
      input: { name: 'method', typed_config: { '@type': TYPE_REQUEST_HEADER_INPUT, header_name: ':method' } },
      value_match: { exact: method },
    },
  };
}

/**
 * Sets `x-envoy-retry-on: reset` on a request whose method is idempotent (GET, HEAD, OPTIONS,
 * TRACE, PUT, DELETE), natively: header_mutation in match_delegate, skipped for every other
 * method. The router ORs the header's conditions into the route's `retry_on` (the other
 * methods'), and removes it before forwarding, so one route serves both classes of methods.
 * Only a route with a retry policy may switch it on: one without would start retrying.
 */
export function idempotentResetFilter(): Json {
  const setReset = {
    name: 'idempotent-reset',
    typed_config: {
      '@type': TYPE_HEADER_MUTATION,
      mutations: {
        request_mutations: [
          {
            append: {
              header: { key: RETRY_ON_HEADER, value: 'reset' },
              append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
            },
          },
        ],
      },
    },
  };
  const idempotent = { or_matcher: { predicate: IDEMPOTENT_METHODS.map(methodIs) } };
  return {
    name: IDEMPOTENT_RESET_FILTER_NAME,
    typed_config: {
      '@type': TYPE_EXTENSION_WITH_MATCHER,
      extension_config: setReset,
      xds_matcher: {
        matcher_list: {
          matchers: [
            {
              predicate: { not_matcher: idempotent },
              on_match: { action: { name: 'skip', typed_config: { '@type': TYPE_SKIP_FILTER } } },
            },
          ],
        },
      },
    },
  };
}

const UPSTREAM_CODEC: Json = {
  name: 'envoy.filters.http.upstream_codec',
  typed_config: { '@type': TYPE_UPSTREAM_CODEC },
};

/**
 * The filter's upstream half for an Envoy whose routes steadfast does not own (attach
 * mode): it runs on every attempt and holds a retry until the backoff floor, by the gate
 * the downstream half opened for the request.
 */
export function backoffFloorFilters(wasmPath: string): Json[] {
  return [
    steadfastFilter('steadfast-upstream', JSON.stringify({ role: 'upstream' }), wasmPath),
    UPSTREAM_CODEC,
  ];
}

/**
 * Gateway mode's upstream half on the cluster of a rule with a backoff. A first attempt never
 * enters the filter: match_delegate skips it when the router's `x-envoy-attempt-count` (set on
 * every attempt by the virtual host's include_request_attempt_count; a client's value is
 * overwritten) is 1. A retry reads its floor from the route's policy token — as the
 * downstream half reads its policy, and as attach mode's filter reads the floor from its token —
 * and is held that long from when it reaches the filter, which is after the previous attempt
 * ended. One configuration for every such cluster: no floor is configured anywhere.
 */
export function clusterRetryHoldFilters(wasmPath: string): Json[] {
  const wasm = steadfastFilter(
    'steadfast-upstream',
    JSON.stringify({ role: 'upstream', gatewayRoutes: true }),
    wasmPath,
  );
  return [
    skippedWhen(
      { name: 'steadfast-upstream', typed_config: wasm['typed_config'] },
      {
        name: 'attempt-count',
        typed_config: { '@type': TYPE_REQUEST_HEADER_INPUT, header_name: ATTEMPT_COUNT_HEADER },
      },
      { exact: '1' },
    ),
    UPSTREAM_CODEC,
  ];
}

/**
 * `filter` wrapped in `match_delegate`: skipped (never instantiated) on a request where
 * `input` matches `value`, run as usual otherwise.
 */
export function skippedWhen(filter: Json, input: Json, value: Json): Json {
  return {
    name: 'envoy.filters.http.match_delegate',
    typed_config: {
      '@type': TYPE_EXTENSION_WITH_MATCHER,
      extension_config: filter,
      xds_matcher: {
        matcher_list: {
          matchers: [
            {
              predicate: { single_predicate: { input, value_match: value } },
              on_match: { action: { name: 'skip', typed_config: { '@type': TYPE_SKIP_FILTER } } },
            },
          ],
        },
      },
    },
  };
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

/**
 * Gateway mode's chain. The filter and stateful_session are off unless a session route
 * switches them on (sessionRouteFilters), the idempotent methods' `reset` unless a route whose
 * retries differ by method does (resetByMethodRouteFilters): every other request, an unmatched one included,
 * costs what the router costs. Off by default rather than off on each route, because a route
 * that says nothing is cheaper for Envoy to build: at 10,000 routes, saying "off" on each
 * (with the policy token, which only the filter reads) made each route change take Envoy
 * 0.2 s longer.
 */
export function gatewayHttpFilters(options: FilterOptions): Json[] {
  return [
    { ...steadfastFilter('steadfast', filterConfiguration(options), options.wasmPath), disabled: true },
    { ...statefulSessionFilter(), disabled: true },
    { ...idempotentResetFilter(), disabled: true },
    { name: 'envoy.filters.http.router', typed_config: { '@type': TYPE_ROUTER } },
  ];
}
