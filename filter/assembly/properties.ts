// Property paths the filter reads, encoded once (NUL-joined, `xds.*` names: docs/architecture.md, Envoy fact 4).
import { propertyPath } from './abi/memory';

/** Attach mode: the token ext_proc returned as dynamic metadata. */
export const P_METADATA_POLICY = propertyPath(['metadata', 'filter_metadata', 'steadfast', 'policy']);
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
