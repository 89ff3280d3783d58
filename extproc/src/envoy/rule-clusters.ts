// The clusters of one route rule. One cluster per rule holds every backendRef's endpoints,
// one locality per backendRef, weighted with its `weight`, so that Envoy's
// locality-weighted round robin splits new traffic like the Gateway API asks while every
// endpoint of the rule stays in the one cluster a session can be pinned within. Rules whose
// clusters come out the same share one (shareClusters, at the end).
//
// weight 0: a LocalityLbEndpoints without `load_balancing_weight` is "assigned no load"
// under locality-weighted balancing (endpoint_components.proto), and Envoy's proto
// forbids an explicit 0. So a weight-0 backendRef keeps its endpoints in the cluster
// (selectable through `stateful_session`'s override host, which looks hosts up by
// address across the whole cluster) and receives no new traffic.
//
// Backends that need another upstream protocol cannot share a cluster: they get clusters
// of their own and the route splits by weight between them. Unresolved backendRefs get a
// share of that split that names no cluster: "the proportion of requests that would
// otherwise have been routed to an invalid backend MUST receive a 500 status code", which
// the route answers through `cluster_not_found_response_code`.
import type {
  HeaderModifier,
  TableBackend,
  TableBackendTls,
  TableEndpoint,
  TableRouteKind,
  TableRule,
} from '../table/policy-table.js';
import { backendTlsTransportSocket } from './backend-tls.js';
import { TYPE_ROUND_ROBIN, backendLocality, ruleClusterName } from './envoy-names.js';
import { type OutlierDetectionOptions, outlierDetection } from './outlier-detection.js';
import { routerPlan } from './router-plan.js';
import { type ClusterProtocol, clusterProtocol, protocolOptions } from './upstream-protocol.js';
import { createHash } from 'node:crypto';
import type { Json } from '../json.js';

export interface ClusterOptions {
  /** The CA bundle TLS clusters trust for BackendTLSPolicy `wellKnownCACertificates: System`. */
  readonly systemCaFile: string;
  readonly connectTimeout: string;
  /**
   * The upstream filter chain that holds retries until a backoff floor (ms): only the
   * clusters of rules with a backoff run it, so no other request pays for it.
   */
  readonly backoffFloorFilters: (backoffMs: number) => readonly Json[];
  /** Ejection of endpoints that refuse connections (outlier-detection.ts has the defaults). */
  readonly outlierDetection?: OutlierDetectionOptions;
}

export interface RuleTarget {
  readonly name: string;
  /** Sum of the group's backendRef weights. */
  readonly weight: number;
  /** A backendRef's own header modifiers: such a backend is a group (a cluster) of its own. */
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
}

export interface RuleClusters {
  readonly clusters: readonly Json[];
  /**
   * What each cluster is made of, as a key (its protocol, backoff, BackendTLSPolicy and
   * backends; the options are the same for every rule): equal keys make equal clusters.
   */
  readonly inputs: readonly string[];
  /** Where the route sends requests: one cluster, or a weighted split between groups. */
  readonly targets: readonly RuleTarget[];
  /** Some targets name no cluster (unresolved backendRefs): their share answers 500. */
  readonly unresolved: boolean;
  /** The rule has a ws or wss backend: its route allows the WebSocket upgrade. */
  readonly websocket: boolean;
  /** RequestMirror targets: each its own cluster, named `<rule id>/mirror/<i>`. */
  readonly mirrors: readonly { readonly name: string; readonly perMillion: number }[];
}

interface Group {
  /** The protocol, and the BackendTLSPolicy when there is one: backends differing in either need their own cluster. */
  readonly key: string;
  readonly protocol: ClusterProtocol | 'invalid';
  readonly tls?: TableBackendTls;
  readonly backends: TableBackend[];
}

function socketAddress(e: TableEndpoint): Json {
  return { socket_address: { address: e.address, port_value: e.port } };
}

/**
 * How many retries the cluster allows at once. Without a retryConstraint, GEP-1731 sets no
 * limit, so Envoy's default of 3 concurrent retries is raised. With one (from an
 * XBackendTrafficPolicy on a backend's Service), Envoy's retry budget: `budget.percent`
 * of the active requests may be retries, and at least `minRetryRate.count` retries may
 * run at once. Envoy's budget counts concurrent requests, not requests per interval, so
 * the intervals are not expressed. Backends of one rule share a cluster: the strictest wins.
 */
function retryThreshold(backends: readonly TableBackend[]): Json {
  const constraints = backends.flatMap((b) => (b.retryConstraint ? [b.retryConstraint] : []));
  if (constraints.length === 0) return { priority: 'DEFAULT', max_retries: 1024 };
  return {
    priority: 'DEFAULT',
    retry_budget: {
      budget_percent: { value: Math.min(...constraints.map((c) => c.budgetPercent)) },
      min_retry_concurrency: Math.min(...constraints.map((c) => c.minRetryCount)),
    },
  };
}

function cluster(
  name: string,
  protocol: ClusterProtocol,
  backends: readonly TableBackend[],
  options: ClusterOptions,
  backoffMs: number,
  tls: TableBackendTls | undefined,
): Json {
  const endpoints = backends.map((b) => ({
    locality: backendLocality(b),
    ...(b.weight > 0 ? { load_balancing_weight: b.weight } : {}),
    lb_endpoints: b.endpoints
      // "ready: false" endpoints must not get traffic; a session pinned to one falls back.
      .filter((e) => e.ready)
      .map((e) => ({ endpoint: { address: socketAddress(e) } })),
  }));
  const dns = backends.some((b) => b.endpoints.some((e) => e.type === 'fqdn'));
  const out: Json = {
    name,
    type: dns ? 'STRICT_DNS' : 'STATIC',
    ...(dns ? { dns_lookup_family: 'V4_PREFERRED' } : {}),
    connect_timeout: options.connectTimeout,
    circuit_breakers: { thresholds: [retryThreshold(backends)] },
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
    load_assignment: { cluster_name: name, endpoints },
    typed_extension_protocol_options: protocolOptions(
      protocol,
      backoffMs > 0 ? options.backoffFloorFilters(backoffMs) : undefined,
    ),
  };
  if (tls) out['transport_socket'] = backendTlsTransportSocket(tls, protocol, options.systemCaFile);
  return out;
}

export function ruleClusters(kind: TableRouteKind, rule: TableRule, options: ClusterOptions): RuleClusters {
  const groups: Group[] = [];
  for (const [index, b] of rule.backends.entries()) {
    const protocol = b.invalid ? 'invalid' : clusterProtocol(kind, b.protocol);
    const tls = b.invalid ? undefined : b.tls;
    const filtered = b.requestHeaders !== undefined || b.responseHeaders !== undefined;
    const key = `${tls ? `${protocol}+${tls.policy}` : protocol}${filtered && !b.invalid ? `+backend-${index}` : ''}`;
    let g = groups.find((x) => x.key === key);
    if (!g) groups.push((g = { key, protocol, ...(tls ? { tls } : {}), backends: [] }));
    g.backends.push(b);
  }
  const single = groups.length === 1 && groups[0]?.key !== 'invalid';
  const { backoffMs } = routerPlan(rule.policy);
  const clusters: Json[] = [];
  const inputs: string[] = [];
  const made = (
    name: string,
    protocol: ClusterProtocol,
    backends: readonly TableBackend[],
    backoff: number,
    tls: TableBackendTls | undefined,
  ) => {
    clusters.push(cluster(name, protocol, backends, options, backoff, tls));
    inputs.push(JSON.stringify([protocol, backoff, tls ?? null, backends]));
  };
  const targets: RuleTarget[] = [];
  for (const g of groups) {
    const name = ruleClusterName(rule, single ? undefined : g.key);
    if (g.protocol !== 'invalid') made(name, g.protocol, g.backends, backoffMs, g.tls);
    const first = g.backends[0];
    targets.push({
      name,
      weight: g.backends.reduce((sum, b) => sum + b.weight, 0),
      ...(first?.requestHeaders && !first.invalid ? { requestHeaders: first.requestHeaders } : {}),
      ...(first?.responseHeaders && !first.invalid ? { responseHeaders: first.responseHeaders } : {}),
    });
  }
  const mirrors: { name: string; perMillion: number }[] = [];
  (rule.mirrors ?? []).forEach((m, i) => {
    if (m.backend.invalid) return;
    const name = `${rule.id}/mirror/${i}`;
    // A mirror's copy is never retried: its cluster needs no backoff filter.
    made(name, clusterProtocol(kind, m.backend.protocol), [m.backend], 0, m.backend.tls);
    mirrors.push({ name, perMillion: m.perMillion });
  });
  return {
    clusters,
    inputs,
    targets,
    mirrors,
    unresolved: groups.some((g) => g.key === 'invalid'),
    websocket: groups.some((g) => g.protocol === 'ws' || g.protocol === 'wss'),
  };
}

/** The zones (backendRefs) of a cluster, for its name. */
function clusterZones(c: Json): string[] {
  const endpoints = ((c['load_assignment'] as Json | undefined)?.['endpoints'] ?? []) as Json[];
  return endpoints.map((e) => String((e['locality'] as Json | undefined)?.['zone'] ?? ''));
}

/** What shareClusters keeps between generations (envoy/generation-memo.ts holds it). */
export interface SharedClusters {
  /** Each rule's clusters after sharing, by rule id, with the own clusters they came from. */
  shared: Map<string, { readonly from: RuleClusters; readonly out: RuleClusters }>;
}

/**
 * Rules whose clusters are the same but for their names share one cluster (issue: 10,000
 * routes to one Service made 10,000 identical clusters). Same means the same backends with
 * the same weights and endpoints, protocol, BackendTLSPolicy, retry limits and backoff
 * filter: a session pins a host by its address, which the shared cluster holds exactly as
 * each rule's own did, and a weight-0 backendRef stays a locality without load. What the
 * rules then share is the cluster's connection pool, circuit breakers, outlier detection
 * and retry budget, as requests to one Service do. The name comes from the content — the
 * backendRefs' zones and a hash — so it does not change when rules come or go, and every
 * replica computes the same one.
 */
export function shareClusters(
  byRule: ReadonlyMap<string, RuleClusters>,
  memo?: SharedClusters,
): {
  readonly clusters: Json[];
  readonly byRule: Map<string, RuleClusters>;
} {
  const kept = memo?.shared;
  const next = new Map<string, { readonly from: RuleClusters; readonly out: RuleClusters }>();
  const byContent = new Map<string, string>();
  // The same inputs make the same cluster: its content need not be written out again to
  // compare (10,000 rules to one Service are one set of inputs).
  const byInputs = new Map<string, string>();
  const clusters: Json[] = [];
  const out = new Map<string, RuleClusters>();
  for (const [ruleId, rc] of byRule) {
    const renamed = new Map<string, string>();
    for (const [i, c] of rc.clusters.entries()) {
      const own = String(c['name']);
      const inputs = rc.inputs[i];
      let name = inputs === undefined ? undefined : byInputs.get(inputs);
      if (name !== undefined) {
        renamed.set(own, name);
        continue;
      }
      const assignment = c['load_assignment'] as Json;
      const key = JSON.stringify({ ...c, name: '', load_assignment: { ...assignment, cluster_name: '' } });
      name = byContent.get(key);
      if (name === undefined) {
        const zones = clusterZones(c);
        const shown = zones.length > 3 ? [...zones.slice(0, 3), `${zones.length - 3}-more`] : zones;
        const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
        name = `backend/${shown.join('+')}/${hash}`;
        byContent.set(key, name);
        clusters.push({ ...c, name, load_assignment: { ...assignment, cluster_name: name } });
      }
      if (inputs !== undefined) byInputs.set(inputs, name);
      renamed.set(own, name);
    }
    // Targets that name no cluster (unresolved backendRefs) keep their name: it still names none.
    const rename = (n: string): string => renamed.get(n) ?? n;
    // The same clusters under the same names as last generation: the same object, so what
    // was generated from it (gateway-config.ts) still holds.
    const last = kept?.get(ruleId);
    const shared =
      last &&
      last.from === rc &&
      rc.targets.every((t, i) => last.out.targets[i]?.name === rename(t.name)) &&
      rc.mirrors.every((m, i) => last.out.mirrors[i]?.name === rename(m.name))
        ? last.out
        : {
            ...rc,
            clusters: [],
            inputs: [],
            targets: rc.targets.map((t) => ({ ...t, name: rename(t.name) })),
            mirrors: rc.mirrors.map((m) => ({ ...m, name: rename(m.name) })),
          };
    out.set(ruleId, shared);
    next.set(ruleId, { from: rc, out: shared });
  }
  if (memo) memo.shared = next;
  return { clusters, byRule: out };
}
