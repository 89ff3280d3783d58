// GEP-1911: the upstream protocol a cluster speaks, from its backends' appProtocol.
// `kubernetes.io/h2c` (or `h2c`) → HTTP/2 prior knowledge; `kubernetes.io/ws` → HTTP/1.1 (the route
// allows the WebSocket upgrade); `kubernetes.io/wss` → HTTP/1.1 over TLS (the TLS comes
// from the BackendTLSPolicy). No appProtocol: HTTP/1.1 for HTTPRoute, HTTP/2 for GRPCRoute
// (gRPC needs HTTP/2).
import type { TableRouteKind, UpstreamProtocol } from '../policy/policy-table.js';

export type ClusterProtocol = 'http1' | 'http2' | 'ws' | 'wss';

export function clusterProtocol(kind: TableRouteKind, protocol: UpstreamProtocol): ClusterProtocol {
  if (protocol === 'h2c') return 'http2';
  if (protocol === 'ws' || protocol === 'wss') return protocol;
  return kind === 'grpc' ? 'http2' : 'http1';
}
