// Gateway mode: the whole Envoy configuration from the IR (ir/gateway-ir.ts), which has taken
// every decision; this only spells it out in Envoy's terms. A pure function of the IR and the
// options: one listener per Gateway port (HTTP/1.1 and h2c on one port; HTTPS with TLS
// terminated, tls-listener.ts), a route configuration with the port's virtual hosts and their
// routes (route-action.ts), and the shared clusters (backend-clusters.ts).
import type { GatewayIr, IrPort, IrVirtualHost } from '../ir/gateway-ir.js';
import type { IrEntry } from '../ir/rule-action.js';
import type { TableListener } from '../policy/policy-table.js';
import type { GenerationMemo } from './generation-memo.js';
import { ResetDefaults } from './reset-default.js';
import {
  type EdgeOptions,
  edgeConnectionManager,
  edgeListener,
  edgeOverloadManager,
} from './edge-defaults.js';
import { PIN_HEADER, TYPE_HCM } from './envoy-names.js';
import {
  clusterRetryHoldFilters,
  type FilterOptions,
  gatewayHttpFilters,
  resetByMethodRouteFilters,
} from './http-filters.js';
import { answeredByEnvoy, envoyRoutes, type RouteOptions } from './route-action.js';
import type { OutlierDetectionOptions } from './outlier-detection.js';
import { type ClusterOptions, envoyCluster } from './backend-clusters.js';
import type { Json } from '../json.js';
import type { TlsMaterial } from '../policy/tls-material.js';
import {
  type ListenerTls,
  type SecretSource,
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
  /** How long a pooled backend connection may sit idle before Envoy closes it; default 50s. */
  readonly upstreamIdleTimeout?: string;
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
  /** With a memo that keeps hosts encoded (xds/route-files.ts keepHost), for its encoder only, never JSON. */
  readonly routeConfigurations: readonly Json[];
  readonly clusters: readonly Json[];
  /** SDS secrets (HTTPS listeners' certificates) the listeners name. */
  readonly secrets: readonly Json[];
  /** What could not be given to Envoy as written (and was left out). */
  readonly warnings: readonly string[];
  /**
   * The route configurations of these names again, every route saying its own `reset` switch
   * (made when called): their hosts are right under either switch of their route configuration,
   * so a VHDS stream holds them while that switch changes (xds/ads-server.ts).
   */
  readonly explicitRouteConfigurations?: (names: ReadonlySet<string>) => readonly Json[];
}

const DEFAULT_SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * Envoy closes a backend connection idle this long (its own default is an hour). A backend that
 * closes an idle connection first can do so just as Envoy sends a request on it, which then fails
 * after it was sent: a 503 for a POST or on a rule without `retry`. Under the 60 s or more that
 * servers set up for load balancers keep idle connections, so those never close first
 * (docs/hardening.md).
 */
export const UPSTREAM_IDLE_TIMEOUT = '50s';

/** The one route of a virtual host whose hosts belong to another SNI chain's listener. */
function misdirectedRoutes(options: RouteOptions): Json[] {
  return [{ match: { prefix: '/' }, direct_response: { status: 421 }, ...answeredByEnvoy(options) }];
}

/** An IR host's routes: each entry's (kept by the memo for a host of several), one entry's (most hosts) as they are. */
function hostRoutes(
  h: IrVirtualHost,
  routeOptions: RouteOptions,
  optionsKey: string,
  memo: GenerationMemo | undefined,
): readonly Json[] {
  if (h.misdirected) return misdirectedRoutes(routeOptions);
  const routes = (e: IrEntry) => envoyRoutes(e, routeOptions);
  if (h.entries.length === 1) return routes(h.entries[0] as IrEntry);
  return h.entries.flatMap((e) => (memo ? memo.routes(e, optionsKey, () => routes(e)) : routes(e)));
}

/** A virtual host spelled out anew (or kept by the memo while made of the same entries under the same options). */
function virtualHost(
  h: IrVirtualHost,
  name: string,
  routeOptions: RouteOptions,
  optionsKey: string,
  memo: GenerationMemo | undefined,
): Json {
  const host = (): Json => ({
    name: h.hostname,
    domains: [h.hostname],
    // The upstream half of a rule with a backoff tells a retry from a first attempt by
    // the router's x-envoy-attempt-count (http-filters.ts).
    ...(h.countsAttempts ? { include_request_attempt_count: true } : {}),
    routes: hostRoutes(h, routeOptions, optionsKey, memo),
  });
  // Misdirected or not, a host without entries has the same parts: the key tells them apart,
  // and a misdirected host's route by its `reset` switch.
  const reset = routeOptions.resetDefault;
  const misdirected = reset && reset !== 'off' ? `\0misdirected\0reset-${reset}` : '\0misdirected';
  const key = `${name}\0${h.hostname}${h.misdirected ? misdirected : ''}`;
  return memo ? memo.host(h, name, optionsKey, key, h.entries, host) : host();
}

function routeConfiguration(
  name: string,
  virtualHosts: readonly IrVirtualHost[],
  routeOptions: RouteOptions,
  memo: GenerationMemo | undefined,
): Json {
  const optionsKey = JSON.stringify(routeOptions);
  return {
    name,
    // Hostnames match without the port a client may add to Host; the backend sees Host as sent.
    ignore_port_in_host_matching: true,
    // Only steadfast's filter may name the pinned host; a client's value is dropped.
    internal_only_headers: [PIN_HEADER],
    // An unresolved backendRef's share names no cluster and answers 500 (ir/rule-clusters.ts).
    validate_clusters: false,
    ...(routeOptions.resetDefault === 'on' ? { typed_per_filter_config: resetByMethodRouteFilters() } : {}),
    // With a memo, only the IR hosts a change moved are looked at (10,000 per generation otherwise).
    virtual_hosts: memo
      ? memo.virtualHosts(name, optionsKey, virtualHosts, (h) =>
          virtualHost(h, name, routeOptions, optionsKey, memo),
        )
      : virtualHosts.map((h) => virtualHost(h, name, routeOptions, optionsKey, memo)),
  };
}

function gatewayClusters(
  ir: GatewayIr,
  options: GatewayConfigOptions,
  secrets: SecretSource,
  memo: GenerationMemo | undefined,
): Json[] {
  const clusterOptions: ClusterOptions = {
    systemCaFile: options.systemCaFile ?? DEFAULT_SYSTEM_CA_FILE,
    connectTimeout: options.connectTimeout ?? '2s',
    idleTimeout: options.upstreamIdleTimeout ?? UPSTREAM_IDLE_TIMEOUT,
    retryHoldFilters: clusterRetryHoldFilters(options.wasmPath),
    secrets,
    ...(options.outlierDetection ? { outlierDetection: options.outlierDetection } : {}),
  };
  return ir.clusters.map((c) => {
    let made = memo?.clusters.get(c);
    if (!made) {
      made = envoyCluster(c, clusterOptions);
      memo?.clusters.set(c, made);
    }
    return made;
  });
}

/** What one port's listener is generated with, besides the port itself. */
interface PortContext {
  readonly options: GatewayConfigOptions;
  readonly routeSource: RouteSource;
  readonly tls: ListenerTls;
  readonly memo: GenerationMemo | undefined;
  /** Each route configuration's `reset` switch, against the last generation's (reset-default.ts). */
  readonly resetDefaults: ResetDefaults;
  /** By name, each route configuration with every route saying its own switch, made when asked for. */
  readonly explicit: Map<string, () => Json>;
  /** Collect the port's warnings and the secrets its listeners name. */
  readonly warnings: Set<string>;
  readonly secrets: Map<string, Json>;
}

/** A port's route configurations: one, or one per SNI chain (ir/misdirected.ts). */
function portRouteConfigurations(group: IrPort, ctx: PortContext): Json[] {
  const routeOptions: RouteOptions = {
    debug: ctx.options.debug === true,
    listener: { port: group.port, https: group.protocol === 'HTTPS' },
  };
  const configs = group.sniChains ?? [{ name: group.name, virtualHosts: group.virtualHosts }];
  return configs.map((c) => {
    const explicit: RouteOptions = { ...routeOptions, resetDefault: 'explicit' };
    ctx.explicit.set(c.name, () => routeConfiguration(c.name, c.virtualHosts, explicit, undefined));
    const on = ctx.resetDefaults.onForAll(c.name, c.virtualHosts);
    const options: RouteOptions = on ? { ...routeOptions, resetDefault: 'on' } : routeOptions;
    return routeConfiguration(c.name, c.virtualHosts, options, ctx.memo);
  });
}

/** The connection manager of a filter chain whose routes are the route configuration `rc`. */
function connectionManager(rc: Json, ctx: PortContext, port: number): Json {
  const name = rc['name'] as string;
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': TYPE_HCM,
      stat_prefix: `gateway_${port}`,
      // HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on the same port.
      codec_type: 'AUTO',
      ...edgeConnectionManager(ctx.options.edge),
      ...(ctx.routeSource.kind === 'inline'
        ? { route_config: rc }
        : { rds: { route_config_name: name, config_source: ctx.routeSource.source(name) } }),
      http_filters: gatewayHttpFilters(ctx.options),
    },
  };
}

/** The filter chains of a port: one for HTTP; for HTTPS one per listener hostname, each with its SNI chain's routes. */
function portFilterChains(group: IrPort, routes: readonly Json[], ctx: PortContext): Json[] {
  if (group.protocol !== 'HTTPS')
    return [{ filters: [connectionManager(routes[0] as Json, ctx, group.port)] }];
  for (const l of group.listeners) {
    for (const id of l.tls?.certificates ?? []) {
      const secret = secretResource(id, ctx.tls.material);
      if (secret) ctx.secrets.set(id, secret);
    }
  }
  const chainRoutes = (l: TableListener): Json => {
    const i = group.sniChains?.findIndex((c) => c.hostname === (l.hostname ?? '*')) ?? 0;
    return routes[Math.max(i, 0)] as Json;
  };
  const network = (l: TableListener) => connectionManager(chainRoutes(l), ctx, group.port);
  return httpsFilterChains(group.listeners, network, ctx.tls.source, ctx.warnings);
}

/** One port's route configurations, and its listener (none when no HTTPS filter chain is left). */
function portResources(group: IrPort, ctx: PortContext): { routes: Json[]; listener?: Json } {
  const { options } = ctx;
  for (const w of group.warnings) ctx.warnings.add(w);
  const routes = portRouteConfigurations(group, ctx);
  const filterChains = portFilterChains(group, routes, ctx);
  if (filterChains.length === 0) return { routes };
  return {
    routes,
    listener: {
      name: group.name,
      address: {
        socket_address: {
          address: options.address ?? '127.0.0.1',
          port_value: options.listenerPorts?.[group.port] ?? group.port,
        },
      },
      ...(options.exclusiveListeners ? { enable_reuse_port: false } : {}),
      ...edgeListener(options.edge),
      ...(group.protocol === 'HTTPS' ? { listener_filters: [TLS_INSPECTOR] } : {}),
      filter_chains: filterChains,
    },
  };
}

export function generateGatewayResources(
  ir: GatewayIr,
  options: GatewayConfigOptions,
  routeSource: RouteSource = { kind: 'inline' },
  tls: ListenerTls = NO_TLS,
  keep?: GenerationMemo,
): GatewayResources {
  // A memo made for other options holds nothing these can use.
  const memo = keep?.options === options ? keep : undefined;
  memo?.begin();
  const clusters = gatewayClusters(ir, options, tls.source, memo);
  const listeners: Json[] = [];
  const routeConfigurations: Json[] = [];
  const ctx: PortContext = {
    options,
    routeSource,
    tls,
    memo,
    resetDefaults: new ResetDefaults(memo),
    explicit: new Map(),
    warnings: new Set<string>(ir.warnings),
    secrets: new Map<string, Json>(),
  };
  // The client certificates TLS clusters present (Gateway spec.tls.backend).
  for (const c of ir.clusters) {
    const id = c.tls?.clientCertificate;
    const secret = id !== undefined ? secretResource(id, tls.material) : undefined;
    if (id !== undefined && secret) ctx.secrets.set(id, secret);
  }
  for (const group of ir.ports) {
    const { routes, listener } = portResources(group, ctx);
    routeConfigurations.push(...routes);
    if (listener) listeners.push(listener);
  }
  memo?.end();
  ctx.resetDefaults.end();
  const explicit = ctx.explicit;
  return {
    listeners,
    routeConfigurations,
    explicitRouteConfigurations: (names) =>
      [...names].flatMap((n): Json[] => {
        const make = explicit.get(n);
        return make ? [make()] : [];
      }),
    clusters,
    secrets: [...ctx.secrets.values()],
    warnings: [...ctx.warnings],
  };
}

/**
 * Envoy refuses a regular expression whose RE2 program is bigger than a runtime limit, 100 by
 * default, and with it the whole configuration it came in. A CORS rule's allowed origins
 * (up to 64) make one expression, and a user's own can be long: the gateway's Envoy takes
 * programs up to this size. RE2's matching time stays linear in the input whatever the size.
 */
const RE2_MAX_PROGRAM_SIZE = 16_384;

/** The gateway's runtime layer. */
function gatewayRuntime(): Json {
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
  ir: GatewayIr,
  options: GatewayConfigOptions,
  tls: TlsMaterial = NO_TLS.material,
): Record<string, unknown> {
  const { listeners, clusters, secrets } = generateGatewayResources(
    ir,
    options,
    { kind: 'inline' },
    { material: tls, source: { kind: 'static' } },
  );
  return {
    ...bootstrapHead(options),
    static_resources: { listeners, clusters, ...(secrets.length > 0 ? { secrets } : {}) },
  };
}
