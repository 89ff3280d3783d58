// The Envoy names steadfast relies on, the types it names, and the headers it adds.
/** The request header that carries the pinned host (base64 `ip:port`) from the filter to `stateful_session`. */
export const PIN_HEADER = 'x-steadfast-pin';
/** The route-metadata namespace and key the filter reads through `xds.route_metadata` (defined with the token). */
export { METADATA_NAMESPACE, METADATA_POLICY_KEY } from '../policy/policy-token.js';

export const TYPE_HCM =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const TYPE_WASM = 'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm';
export const TYPE_DYNAMIC_MODULE_FILTER =
  'type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter';
export const TYPE_STRING_VALUE = 'type.googleapis.com/google.protobuf.StringValue';
export const TYPE_STATEFUL_SESSION =
  'type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
export const TYPE_HEADER_SESSION_STATE =
  'type.googleapis.com/envoy.extensions.http.stateful_session.header.v3.HeaderBasedSessionState';
export const TYPE_ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
export const TYPE_UPSTREAM_CODEC =
  'type.googleapis.com/envoy.extensions.filters.http.upstream_codec.v3.UpstreamCodec';
export const TYPE_HTTP_PROTOCOL_OPTIONS =
  'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
export const TYPE_UPSTREAM_TLS =
  'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
export const TYPE_DOWNSTREAM_TLS =
  'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
export const TYPE_SECRET = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
export const TYPE_ROUND_ROBIN =
  'type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin';
export const TYPE_LISTENER = 'type.googleapis.com/envoy.config.listener.v3.Listener';
export const TYPE_CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
export const TYPE_ROUTE_CONFIGURATION = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

export const TYPE_FIXED_HEAP =
  'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig';
export const TYPE_DOWNSTREAM_CONNECTIONS =
  'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig';
export const TYPE_PREVIOUS_HOSTS =
  'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate';

/**
 * The HTTP filter names in gateway mode's chain: routes without a session switch them off by name.
 * The filter keeps its slot's name whichever build runs in it (wasm or the native module), so
 * routes are the same for both.
 */
export const STEADFAST_FILTER_NAME = 'envoy.filters.http.wasm';
export const STATEFUL_SESSION_FILTER_NAME = 'envoy.filters.http.stateful_session';
/** The filter that adds `reset` to an idempotent request's retry conditions (routes with retries). */
export const IDEMPOTENT_RESET_FILTER_NAME = 'steadfast.idempotent-reset';
/** The router ORs this request header's conditions into the route's `retry_on`. */
export const RETRY_ON_HEADER = 'x-envoy-retry-on';
/** Debug only: the policy token echoed on responses. */
export const DEBUG_POLICY_HEADER = 'x-steadfast-policy';
/** Set by the router on each attempt when the virtual host's include_request_attempt_count is on. */
export const ATTEMPT_COUNT_HEADER = 'x-envoy-attempt-count';
export const TYPE_EXTENSION_WITH_MATCHER =
  'type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher';
export const TYPE_REQUEST_HEADER_INPUT =
  'type.googleapis.com/envoy.type.matcher.v3.HttpRequestHeaderMatchInput';
export const TYPE_FILTER_STATE_INPUT =
  'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.FilterStateInput';
export const TYPE_SKIP_FILTER =
  'type.googleapis.com/envoy.extensions.filters.common.matcher.action.v3.SkipFilter';
export const TYPE_FILTER_CONFIG = 'type.googleapis.com/envoy.config.route.v3.FilterConfig';
export const TYPE_HEADER_MUTATION =
  'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation';
