// Envoy as an edge proxy (Envoy's "Configuring Envoy as an edge proxy" best practice):
// Envoy's own defaults suit a service mesh, where every client is trusted. Gateway mode
// faces clients directly, so its connection managers normalize paths before routes are
// matched, own the client address, bound headers, time and HTTP/2 resources, and the
// bootstrap carries an overload manager. Each default and its reason is in docs/hardening.md.
import type { Json } from '../json.js';
import { TYPE_DOWNSTREAM_CONNECTIONS, TYPE_FIXED_HEAP } from './envoy-names.js';

export type EscapedSlashesAction =
  'KEEP_UNCHANGED' | 'REJECT_REQUEST' | 'UNESCAPE_AND_REDIRECT' | 'UNESCAPE_AND_FORWARD';

export interface EdgeOptions {
  /** Proxies in front of Envoy whose x-forwarded-for entries are trusted (0: the client connects directly). */
  readonly xffNumTrustedHops?: number;
  /** What a path holding %2F, %5C (any case) gets. */
  readonly escapedSlashesAction?: EscapedSlashesAction;
  /** The request headers, in KiB, and their count. */
  readonly maxRequestHeadersKb?: number;
  readonly maxHeadersCount?: number;
  /** Time allowed for a client to send the request headers. */
  readonly requestHeadersTimeout?: string;
  /** A stream with no activity for this long is reset. */
  readonly streamIdleTimeout?: string;
  /** A connection with no stream for this long is closed. */
  readonly idleTimeout?: string;
  /** Read/write buffer per downstream connection. */
  readonly connectionBufferLimitBytes?: number;
  /** HTTP/2 from clients. */
  readonly maxConcurrentStreams?: number;
  readonly initialStreamWindowSize?: number;
  readonly initialConnectionWindowSize?: number;
  /** Heap size the overload manager measures against; past 95 % it shrinks, past 98 % new requests get 503. */
  readonly maxHeapBytes?: number;
  /** Downstream connections across all listeners. */
  readonly maxDownstreamConnections?: number;
}

const EDGE_DEFAULTS: Required<EdgeOptions> = {
  xffNumTrustedHops: 0,
  escapedSlashesAction: 'UNESCAPE_AND_REDIRECT',
  maxRequestHeadersKb: 60,
  maxHeadersCount: 100,
  requestHeadersTimeout: '10s',
  streamIdleTimeout: '300s',
  idleTimeout: '3600s',
  connectionBufferLimitBytes: 32_768,
  maxConcurrentStreams: 100,
  initialStreamWindowSize: 65_536,
  initialConnectionWindowSize: 1_048_576,
  maxHeapBytes: 1_073_741_824,
  maxDownstreamConnections: 50_000,
};

const resolved = (options: EdgeOptions | undefined): Required<EdgeOptions> => ({
  ...EDGE_DEFAULTS,
  ...options,
});

/** Fields merged into every gateway http_connection_manager. */
export function edgeConnectionManager(options?: EdgeOptions): Json {
  const o = resolved(options);
  return {
    // Route matching sees the RFC 3986 normalized path (`.`/`..` resolved) with `//` merged,
    // so /cart/../admin is /admin to the routes and to the backend alike.
    normalize_path: true,
    merge_slashes: true,
    path_with_escaped_slashes_action: o.escapedSlashesAction,
    // The client address is the connection's own; x-forwarded-for from a client is not believed.
    use_remote_address: true,
    xff_num_trusted_hops: o.xffNumTrustedHops,
    // Upstreams may read `_` and `-` as the same; drop such headers instead of passing them on.
    common_http_protocol_options: {
      headers_with_underscores_action: 'DROP_HEADER',
      max_headers_count: o.maxHeadersCount,
      idle_timeout: o.idleTimeout,
    },
    max_request_headers_kb: o.maxRequestHeadersKb,
    request_headers_timeout: o.requestHeadersTimeout,
    stream_idle_timeout: o.streamIdleTimeout,
    http2_protocol_options: {
      max_concurrent_streams: o.maxConcurrentStreams,
      initial_stream_window_size: o.initialStreamWindowSize,
      initial_connection_window_size: o.initialConnectionWindowSize,
    },
  };
}

/** Fields merged into every gateway listener. */
export function edgeListener(options?: EdgeOptions): Json {
  return { per_connection_buffer_limit_bytes: resolved(options).connectionBufferLimitBytes };
}

const FIXED_HEAP = 'envoy.resource_monitors.fixed_heap';

/** The bootstrap's overload_manager: a heap limit and a cap on downstream connections. */
export function edgeOverloadManager(options?: EdgeOptions): Json {
  const o = resolved(options);
  const onHeap = (action: string, value: number): Json => ({
    name: action,
    triggers: [{ name: FIXED_HEAP, threshold: { value } }],
  });
  return {
    refresh_interval: '0.25s',
    resource_monitors: [
      {
        name: FIXED_HEAP,
        typed_config: { '@type': TYPE_FIXED_HEAP, max_heap_size_bytes: o.maxHeapBytes },
      },
      {
        name: 'envoy.resource_monitors.global_downstream_max_connections',
        typed_config: {
          '@type': TYPE_DOWNSTREAM_CONNECTIONS,
          max_active_downstream_connections: o.maxDownstreamConnections,
        },
      },
    ],
    actions: [
      onHeap('envoy.overload_actions.shrink_heap', 0.95),
      onHeap('envoy.overload_actions.stop_accepting_requests', 0.98),
    ],
  };
}
