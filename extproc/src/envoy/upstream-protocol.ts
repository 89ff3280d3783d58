// GEP-1911: the upstream protocol a cluster speaks, from its backends' appProtocol.
// `kubernetes.io/h2c` → HTTP/2 prior knowledge; `kubernetes.io/ws` → HTTP/1.1 (the route
// allows the WebSocket upgrade); `kubernetes.io/wss` → HTTP/1.1 over TLS (the TLS comes
// from the BackendTLSPolicy, backend-tls.ts). No appProtocol: HTTP/1.1 for HTTPRoute, HTTP/2 for
// GRPCRoute (gRPC needs HTTP/2).
import type { TableRouteKind, UpstreamProtocol } from '../table/policy-table.js';
import { TYPE_HTTP_PROTOCOL_OPTIONS } from './envoy-names.js';
import type { Json } from '../json.js';

export type ClusterProtocol = 'http1' | 'http2' | 'ws' | 'wss';

export function clusterProtocol(kind: TableRouteKind, protocol: UpstreamProtocol): ClusterProtocol {
  if (protocol === 'h2c') return 'http2';
  if (protocol === 'ws' || protocol === 'wss') return protocol;
  return kind === 'grpc' ? 'http2' : 'http1';
}

/** The cluster's `typed_extension_protocol_options`: an explicit HTTP version. */
/** The cluster's HTTP protocol options, with its own upstream HTTP filter chain when given. */
export function protocolOptions(protocol: ClusterProtocol, upstreamFilters?: readonly Json[]): Json {
  const explicit = protocol === 'http2' ? { http2_protocol_options: {} } : { http_protocol_options: {} };
  return {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
      '@type': TYPE_HTTP_PROTOCOL_OPTIONS,
      explicit_http_config: explicit,
      ...(upstreamFilters ? { http_filters: [...upstreamFilters] } : {}),
    },
  };
}
