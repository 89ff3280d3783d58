// Gateway mode fed by the ADS server (xds/ads-server.ts): the bootstrap an Envoy of the fleet
// starts from, and the resources of one generation with routes and certificates named over
// ADS. Pure, like file-resources.ts, which does the same for the single local Envoy.
import type { GenerationMemo } from './generation-memo.js';
import type { GatewayIr } from '../ir/gateway-ir.js';
import { NO_TLS_MATERIAL, type TlsMaterial } from '../policy/tls-material.js';
import { TYPE_HTTP_PROTOCOL_OPTIONS, TYPE_UPSTREAM_TLS } from './envoy-names.js';
import {
  type GatewayConfigOptions,
  type GatewayResources,
  bootstrapHead,
  generateGatewayResources,
} from './gateway-config.js';
import type { Json } from '../json.js';

/** The bootstrap's cluster that reaches the control plane. */
const XDS_CLUSTER = 'steadfast_xds';

const ADS_SOURCE: Json = { ads: {}, resource_api_version: 'V3' };

export interface XdsBootstrapOptions extends Pick<GatewayConfigOptions, 'admin' | 'edge'> {
  /** Where the ADS server listens. */
  readonly xds: { readonly host: string; readonly port: number };
  /** This Envoy's name in the control plane's status and logs. */
  readonly nodeId: string;
  /**
   * Which listeners this Envoy is given: the control plane generates one set per kind.
   * steadfast uses the listener address (each Envoy of a fleet on one machine binds its own).
   */
  readonly nodeKind: string;
  /** Presented on the ADS stream (`authorization: Bearer …`) when the control plane asks for one. */
  readonly token?: string;
  /** Incremental xDS (only what changed is sent) rather than state of the world. */
  readonly delta?: boolean;
  /** Mutual TLS to the control plane: this Envoy's certificate and key, and the CA of the control plane's (files on the Envoy's machine). */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
}

/**
 * The ADS cluster's TLS: the Envoy's client certificate, HTTP/2 by ALPN, and the control
 * plane's certificate checked against the CA and the name (or address) the bootstrap dials.
 */
function xdsTransportSocket(tls: NonNullable<XdsBootstrapOptions['tls']>, host: string, ip: boolean): Json {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': TYPE_UPSTREAM_TLS,
      ...(ip ? {} : { sni: host }),
      common_tls_context: {
        alpn_protocols: ['h2'],
        tls_certificates: [{ certificate_chain: { filename: tls.cert }, private_key: { filename: tls.key } }],
        validation_context: {
          trusted_ca: { filename: tls.ca },
          match_typed_subject_alt_names: [
            { san_type: ip ? 'IP_ADDRESS' : 'DNS', matcher: { exact: host.replace(/^\[(.*)\]$/, '$1') } },
          ],
        },
      },
    },
  };
}

/** The bootstrap of one Envoy of the fleet: everything but itself comes over ADS. */
export function xdsBootstrap(options: XdsBootstrapOptions): Record<string, unknown> {
  const ip = /^[0-9.]+$|:/.test(options.xds.host);
  return {
    ...bootstrapHead(options, {
      id: options.nodeId,
      cluster: 'steadfast',
      metadata: { steadfast_node_kind: options.nodeKind },
    }),
    dynamic_resources: {
      ads_config: {
        api_type: options.delta ? 'DELTA_GRPC' : 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [
          {
            envoy_grpc: { cluster_name: XDS_CLUSTER },
            ...(options.token !== undefined
              ? { initial_metadata: [{ key: 'authorization', value: `Bearer ${options.token}` }] }
              : {}),
          },
        ],
        set_node_on_first_message_only: true,
      },
      lds_config: ADS_SOURCE,
      cds_config: ADS_SOURCE,
    },
    static_resources: {
      clusters: [
        {
          name: XDS_CLUSTER,
          type: ip ? 'STATIC' : 'STRICT_DNS',
          connect_timeout: '1s',
          load_assignment: {
            cluster_name: XDS_CLUSTER,
            endpoints: [
              {
                lb_endpoints: [
                  {
                    endpoint: {
                      address: {
                        socket_address: { address: options.xds.host, port_value: options.xds.port },
                      },
                    },
                  },
                ],
              },
            ],
          },
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': TYPE_HTTP_PROTOCOL_OPTIONS,
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
          ...(options.tls ? { transport_socket: xdsTransportSocket(options.tls, options.xds.host, ip) } : {}),
        },
      ],
    },
  };
}

export const TYPE_VIRTUAL_HOST = 'type.googleapis.com/envoy.config.route.v3.VirtualHost';

/**
 * A route configuration whose virtual hosts come apart over the delta ADS stream (VHDS): Envoy
 * takes `ads` as VHDS's source only when its ADS stream is delta (1.38 and later).
 */
export const VHDS: Json = { config_source: ADS_SOURCE };

export const TYPE_CLUSTER_LOAD_ASSIGNMENT =
  'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

/** A generation for the fleet: the gateway's resources, with endpoints apart from clusters (EDS). */
export interface XdsResources extends GatewayResources {
  /** ClusterLoadAssignments, one per EDS cluster, named as the cluster. */
  readonly endpoints?: readonly Json[];
}

/**
 * One generation's resources for Envoys fed over ADS: routes and certificates by name, and
 * the endpoints of every cluster of IP addresses apart (EDS), so that an EndpointSlice change
 * sends a ClusterLoadAssignment and leaves the cluster as it is. Clusters of DNS names keep
 * resolving their own.
 */
export function xdsResources(
  ir: GatewayIr,
  options: GatewayConfigOptions,
  tls: TlsMaterial = NO_TLS_MATERIAL,
  memo?: GenerationMemo,
): XdsResources {
  const generated = generateGatewayResources(
    ir,
    options,
    { kind: 'rds', source: () => ADS_SOURCE },
    { material: tls, source: { kind: 'sds', source: () => ADS_SOURCE } },
    memo,
  );
  const endpoints: Json[] = [];
  const clusters = generated.clusters.map((c) => {
    if (c['type'] !== 'STATIC' || c['load_assignment'] === undefined) return c;
    const { load_assignment: assignment, ...rest } = c;
    endpoints.push(assignment as Json);
    return { ...rest, type: 'EDS', eds_cluster_config: { eds_config: ADS_SOURCE } };
  });
  return { ...generated, clusters, endpoints };
}

/**
 * The same generation for Envoys whose listeners bind `address`: only the listeners name the
 * address they bind, so every other resource is the same object for every kind of Envoy, and
 * what is made of it (the ADS server's encodings, the steps between generations) is made once.
 */
export function onAddress(resources: XdsResources, address: string): XdsResources {
  const listeners = resources.listeners.map((l) => {
    const at = (l['address'] as { socket_address: Json }).socket_address;
    return at['address'] === address ? l : { ...l, address: { socket_address: { ...at, address } } };
  });
  return { ...resources, listeners };
}
