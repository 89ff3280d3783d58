// Gateway mode: the whole Envoy configuration from a PolicyTable. A pure function of the
// table and the options: one listener per Gateway port of the table's Envoy-shaped form
// (ir/gateway-ir.ts; HTTP/1.1 and h2c on one port; HTTPS with TLS terminated,
// tls-listener.ts), virtual hosts from hostnames, routes in Gateway API precedence order
// carrying their policy token, and a cluster per rule that rules with the same backends
// share (rule-clusters.ts).
import type { PolicyTable, TableMatch, TableRule } from '../table/policy-table.js';
import type { GenerationMemo } from './generation-memo.js';
import {
  type EdgeOptions,
  edgeConnectionManager,
  edgeListener,
  edgeOverloadManager,
} from './edge-defaults.js';
import { PIN_HEADER, TYPE_HCM } from './envoy-names.js';
import { clusterBackoffFilters, type FilterOptions, gatewayHttpFilters } from './http-filters.js';
import { type IrPort, gatewayIr, portVirtualHosts } from '../ir/gateway-ir.js';
import { matchRe2Problem } from '../table/re2-syntax.js';
import { envoyRoutes, type RouteOptions } from './route-action.js';
import { routerPlan } from './router-plan.js';
import type { OutlierDetectionOptions } from './outlier-detection.js';
import { type RuleClusters, ruleClusters, shareClusters } from './rule-clusters.js';
import type { Json } from '../json.js';
import type { TlsMaterial } from '../table/tls-material.js';
import {
  type ListenerTls,
  NO_TLS,
  TLS_INSPECTOR,
  httpsFilterChains,
  secretResource,
} from './tls-listener.js';

export interface GatewayConfigOptions extends FilterOptions {
  /** Address every listener binds; default 127.0.0.1. */
  readonly address?: string;
  /** Envoy's admin interface; default 127.0.0.1:9901. */
  readonly admin?: { readonly address: string; readonly port: number };
  /** Bind ports by Gateway listener port (e.g. 0 in tests); unlisted ports bind as written. */
  readonly listenerPorts?: Readonly<Record<number, number>>;
  /**
   * Listeners bind without SO_REUSEPORT (`enable_reuse_port: false`), so a second Envoy on the
   * same port fails to bind instead of silently taking half the connections. For local runs.
   */
  readonly exclusiveListeners?: boolean;
  /** CA bundle for `kubernetes.io/wss` backends; default the Debian/Ubuntu system bundle. */
  readonly systemCaFile?: string;
  readonly connectTimeout?: string;
  /** Overrides the ejection of endpoints that refuse connections (outlier-detection.ts). */
  readonly outlierDetection?: OutlierDetectionOptions;
  /** Overrides the edge-proxy defaults (edge-defaults.ts, docs/hardening.md). */
  readonly edge?: EdgeOptions;
}

/** Where a listener's routes come from: inline, or an RDS config source (file-based reload). */
export type RouteSource =
  { readonly kind: 'inline' } | { readonly kind: 'rds'; source: (name: string) => Json };

export interface GatewayResources {
  readonly listeners: readonly Json[];
  readonly routeConfigurations: readonly Json[];
  readonly clusters: readonly Json[];
  /** SDS secrets (HTTPS listeners' certificates) the listeners name. */
  readonly secrets: readonly Json[];
  /** What could not be given to Envoy as written (and was left out). */
  readonly warnings: readonly string[];
}

export const DEFAULT_SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

function routeConfiguration(
  port: IrPort,
  clusters: Map<string, RuleClusters>,
  warnings: Set<string>,
  routeOptions: RouteOptions,
  memo: GenerationMemo | undefined,
): Json {
  const optionsKey = JSON.stringify(routeOptions);
  const matchRoutes = (rule: TableRule, match: TableMatch) => {
    const ruleClusters = clusters.get(rule.id);
    const make = () => ({
      routes: envoyRoutes(rule, match, ruleClusters, routeOptions),
      // The upstream half of a rule with a backoff tells a retry from a first attempt by
      // the router's x-envoy-attempt-count (http-filters.ts).
      backoff: !rule.invalid && routerPlan(rule.policy).backoffMs > 0,
    });
    return memo ? memo.routes(match, ruleClusters, optionsKey, make) : make();
  };
  return {
    name: port.name,
    // Hostnames match without the port a client may add to Host; the backend sees Host as sent.
    ignore_port_in_host_matching: true,
    // Only steadfast's filter may name the pinned host; a client's value is dropped.
    internal_only_headers: [PIN_HEADER],
    // An unresolved backendRef's share names no cluster and answers 500 (rule-clusters.ts).
    validate_clusters: false,
    virtual_hosts: portVirtualHosts(port).map((h) => {
      const made = h.entries
        .filter((e) => {
          const problem = matchRe2Problem(e.match);
          if (problem !== undefined) warnings.add(`${problem}; the match is left out of Envoy's routes`);
          return problem === undefined;
        })
        .map((e) => matchRoutes(e.rule, e.match));
      const host = (): Json => ({
        name: h.hostname,
        domains: [h.hostname],
        ...(made.some((m) => m.backoff) ? { include_request_attempt_count: true } : {}),
        routes: made.flatMap((m) => m.routes),
      });
      return memo
        ? memo.host(
            `${port.name}\0${h.hostname}`,
            made.map((m) => m.routes),
            host,
          )
        : host();
    }),
  };
}

export function generateGatewayResources(
  table: PolicyTable,
  options: GatewayConfigOptions,
  routeSource: RouteSource = { kind: 'inline' },
  tls: ListenerTls = NO_TLS,
  keep?: GenerationMemo,
): GatewayResources {
  // A memo made for other options holds nothing these can use.
  const memo = keep?.options === options ? keep : undefined;
  memo?.begin();
  const clusterOptions = {
    systemCaFile: options.systemCaFile ?? DEFAULT_SYSTEM_CA_FILE,
    connectTimeout: options.connectTimeout ?? '2s',
    backoffFloorFilters: (backoffMs: number) => clusterBackoffFilters(options.wasmPath, backoffMs),
    ...(options.outlierDetection ? { outlierDetection: options.outlierDetection } : {}),
  };
  const own = new Map<string, RuleClusters>();
  for (const route of table.routes) {
    for (const rule of route.rules) {
      if (rule.invalid || own.has(rule.id)) continue;
      let made = memo?.ruleClusters.get(rule);
      if (!made) {
        made = ruleClusters(route.kind, rule, clusterOptions);
        memo?.ruleClusters.set(rule, made);
      }
      own.set(rule.id, made);
    }
  }
  const { clusters, byRule } = shareClusters(own, memo);
  const listeners: Json[] = [];
  const routeConfigurations: Json[] = [];
  const warnings = new Set<string>();
  for (const l of table.listeners) {
    if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') {
      warnings.add(
        `${l.id}: protocol ${l.protocol} is not served in gateway mode (HTTP and HTTPS listeners only)`,
      );
    }
  }
  const ir = gatewayIr(table);
  for (const w of ir.warnings) warnings.add(w);
  const secrets = new Map<string, Json>();
  for (const group of ir.ports) {
    const name = group.name;
    const rc = routeConfiguration(
      group,
      byRule,
      warnings,
      { debug: options.debug === true, listener: { port: group.port, https: group.protocol === 'HTTPS' } },
      memo,
    );
    routeConfigurations.push(rc);
    const hcm: Json = {
      '@type': TYPE_HCM,
      stat_prefix: `gateway_${group.port}`,
      // HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on the same port.
      codec_type: 'AUTO',
      ...edgeConnectionManager(options.edge),
      ...(routeSource.kind === 'inline'
        ? { route_config: rc }
        : { rds: { route_config_name: name, config_source: routeSource.source(name) } }),
      http_filters: gatewayHttpFilters(options),
    };
    const network = (): Json => ({
      name: 'envoy.filters.network.http_connection_manager',
      typed_config: structuredClone(hcm),
    });
    const https = group.protocol === 'HTTPS';
    if (https) {
      for (const l of group.listeners) {
        for (const id of l.tls?.certificates ?? []) {
          const secret = secretResource(id, tls.material);
          if (secret) secrets.set(id, secret);
        }
      }
    }
    const filterChains = https
      ? httpsFilterChains(group.listeners, network, tls.source, warnings)
      : [{ filters: [network()] }];
    if (filterChains.length === 0) continue;
    listeners.push({
      name,
      address: {
        socket_address: {
          address: options.address ?? '127.0.0.1',
          port_value: options.listenerPorts?.[group.port] ?? group.port,
        },
      },
      ...(options.exclusiveListeners ? { enable_reuse_port: false } : {}),
      ...edgeListener(options.edge),
      ...(https ? { listener_filters: [TLS_INSPECTOR] } : {}),
      filter_chains: filterChains,
    });
  }
  memo?.end();
  return {
    listeners,
    routeConfigurations,
    clusters,
    secrets: [...secrets.values()],
    warnings: [...warnings],
  };
}

/**
 * Envoy refuses a regular expression whose RE2 program is bigger than a runtime limit, 100 by
 * default, and with it the whole configuration it came in. A CORS rule's allowed origins
 * (up to 64) make one expression, and a user's own can be long: the gateway's Envoy takes
 * programs up to this size. RE2's matching time stays linear in the input whatever the size.
 */
export const RE2_MAX_PROGRAM_SIZE = 16_384;

/** The gateway's runtime layer. */
export function gatewayRuntime(): Json {
  return {
    layers: [
      { name: 'steadfast', static_layer: { 're2.max_program_size.error_level': RE2_MAX_PROGRAM_SIZE } },
    ],
  };
}

export function adminConfig(options: Pick<GatewayConfigOptions, 'admin'>): Json {
  const admin = options.admin ?? { address: '127.0.0.1', port: 9901 };
  return { address: { socket_address: { address: admin.address, port_value: admin.port } } };
}

/**
 * What every gateway-mode bootstrap starts with, however its resources come (inline, files,
 * ADS): the node, Envoy's admin, the edge overload manager and the runtime layer.
 */
export function bootstrapHead(
  options: Pick<GatewayConfigOptions, 'admin' | 'edge'>,
  node: Json = { id: 'steadfast-gateway', cluster: 'steadfast' },
): Record<string, unknown> {
  return {
    node,
    admin: adminConfig(options),
    overload_manager: edgeOverloadManager(options.edge),
    layered_runtime: gatewayRuntime(),
  };
}

/** The complete Envoy bootstrap with every resource static (what `envoy-config --mode gateway` prints). */
export function generateGatewayConfig(
  table: PolicyTable,
  options: GatewayConfigOptions,
  tls: TlsMaterial = NO_TLS.material,
): Record<string, unknown> {
  const { listeners, clusters, secrets } = generateGatewayResources(
    table,
    options,
    { kind: 'inline' },
    { material: tls, source: { kind: 'static' } },
  );
  return {
    ...bootstrapHead(options),
    static_resources: { listeners, clusters, ...(secrets.length > 0 ? { secrets } : {}) },
  };
}
