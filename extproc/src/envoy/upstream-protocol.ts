// A cluster's protocol (decided in ir/cluster-protocol.ts) as Envoy's HTTP protocol options.
import type { ClusterProtocol } from '../ir/cluster-protocol.js';
import { TYPE_HTTP_PROTOCOL_OPTIONS } from './envoy-names.js';
import type { Json } from '../json.js';

/**
 * The cluster's HTTP protocol options: its protocol, how long a pooled connection may sit idle
 * before Envoy closes it (gateway-config.ts has the default and why), and its own upstream HTTP
 * filter chain when given.
 */
export function protocolOptions(
  protocol: ClusterProtocol,
  idleTimeout: string,
  upstreamFilters?: readonly Json[],
): Json {
  const explicit = protocol === 'http2' ? { http2_protocol_options: {} } : { http_protocol_options: {} };
  return {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
      '@type': TYPE_HTTP_PROTOCOL_OPTIONS,
      common_http_protocol_options: { idle_timeout: idleTimeout },
      explicit_http_config: explicit,
      ...(upstreamFilters ? { http_filters: [...upstreamFilters] } : {}),
    },
  };
}
