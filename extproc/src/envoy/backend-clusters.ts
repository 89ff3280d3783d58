// The IR's clusters (ir/rule-clusters.ts, shared in ir/cluster-sharing.ts) as Envoy clusters:
// one locality per backendRef under locality-weighted round robin, the retry limits, outlier
// detection, the protocol, the upstream filter that holds retries to a backoff floor, and
// BackendTLSPolicy's transport socket.
import type { IrCluster } from '../ir/cluster-sharing.js';
import { backendTlsTransportSocket } from './backend-tls.js';
import type { SecretSource } from './tls-listener.js';
import { TYPE_ROUND_ROBIN } from './envoy-names.js';
import { type OutlierDetectionOptions, outlierDetection } from './outlier-detection.js';
import { protocolOptions } from './upstream-protocol.js';
import type { Json } from '../json.js';

export interface ClusterOptions {
  /** The CA bundle TLS clusters trust for BackendTLSPolicy `wellKnownCACertificates: System`. */
  readonly systemCaFile: string;
  readonly connectTimeout: string;
  /** How long a pooled upstream connection may sit idle before Envoy closes it. */
  readonly idleTimeout: string;
  /**
   * The upstream filter chain that holds retries until their backoff floor: only the clusters
   * of rules with a backoff run it, so no other request pays for it.
   */
  readonly retryHoldFilters: readonly Json[];
  /** Where TLS clusters find the client certificate they present (Gateway spec.tls.backend). */
  readonly secrets: SecretSource;
  /** Ejection of endpoints that refuse connections (outlier-detection.ts has the defaults). */
  readonly outlierDetection?: OutlierDetectionOptions;
}

/**
 * How many retries the cluster allows at once. Without a retry budget, GEP-1731 sets no
 * limit, so Envoy's default of 3 concurrent retries is raised. Envoy's budget counts
 * concurrent requests, not requests per interval, so the policy's intervals are not expressed.
 */
function retryThreshold(budget: IrCluster['retryBudget']): Json {
  if (!budget) return { priority: 'DEFAULT', max_retries: 1024 };
  return {
    priority: 'DEFAULT',
    retry_budget: {
      budget_percent: { value: budget.percent },
      min_retry_concurrency: budget.minConcurrency,
    },
  };
}

export function envoyCluster(c: IrCluster, options: ClusterOptions): Json {
  const endpoints = c.localities.map((l) => ({
    locality: { zone: l.zone },
    ...(l.weight > 0 ? { load_balancing_weight: l.weight } : {}),
    lb_endpoints: l.endpoints.map((e) => ({
      endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
    })),
  }));
  const out: Json = {
    name: c.name,
    type: c.dns ? 'STRICT_DNS' : 'STATIC',
    ...(c.dns ? { dns_lookup_family: 'V4_PREFERRED' } : {}),
    connect_timeout: options.connectTimeout,
    circuit_breakers: { thresholds: [retryThreshold(c.retryBudget)] },
    outlier_detection: outlierDetection(options.outlierDetection),
    load_balancing_policy: {
      policies: [
        {
          typed_extension_config: {
            name: 'envoy.load_balancing_policies.round_robin',
            typed_config: {
              '@type': TYPE_ROUND_ROBIN,
              locality_lb_config: { locality_weighted_lb_config: {} },
            },
          },
        },
      ],
    },
    load_assignment: { cluster_name: c.name, endpoints },
    typed_extension_protocol_options: protocolOptions(
      c.protocol,
      options.idleTimeout,
      c.holdsRetries ? options.retryHoldFilters : undefined,
    ),
  };
  if (c.tls)
    out['transport_socket'] = backendTlsTransportSocket(
      c.tls,
      c.protocol,
      options.systemCaFile,
      options.secrets,
    );
  return out;
}
