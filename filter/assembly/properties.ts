// Property paths the filter reads, encoded once (NUL-joined, `xds.*` names: docs/architecture.md, Envoy fact 4).
import { propertyPath } from './abi/memory';

/** Attach mode: the token ext_proc returned as dynamic metadata. */
export const P_METADATA_POLICY = propertyPath(['metadata', 'filter_metadata', 'steadfast', 'policy']);
/** Attach mode: the scope the control service sent beside the token (for the answer cache). */
export const P_METADATA_SCOPE = propertyPath(['metadata', 'filter_metadata', 'steadfast', 'scope']);
/**
 * Attach mode: the answer the lookup instance found in the cache, set by it for this request
 * only (Envoy filter state `wasm.steadfast_answer`, which ext_proc's skip matcher reads).
 */
export const P_CACHED_ANSWER = propertyPath(['steadfast_answer']);
/**
 * What tells the request's Gateway port in attach mode: the Envoy listener's metadata
 * `steadfast.gateway_port`, and the local port of the connection.
 */
export const P_GATEWAY_PORT = propertyPath([
  'xds',
  'listener_metadata',
  'filter_metadata',
  'steadfast',
  'gateway_port',
]);
export const P_DESTINATION_PORT = propertyPath(['destination', 'port']);
/** Gateway mode: the token in the matched route's metadata. */
export const P_ROUTE_POLICY = propertyPath([
  'xds',
  'route_metadata',
  'filter_metadata',
  'steadfast',
  'policy',
]);
/** The upstream host that actually served the request, `ip:port`. */
export const P_UPSTREAM_ADDRESS = propertyPath(['upstream', 'address']);
/** Present only when the downstream connection is TLS. */
export const P_TLS_VERSION = propertyPath(['connection', 'tls_version']);
