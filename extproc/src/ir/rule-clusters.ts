// The clusters one route rule needs, before rules share them (cluster-sharing.ts). One cluster
// per rule holds every backendRef's endpoints, one locality per backendRef, weighted with its
// `weight`, so that locality-weighted round robin splits new traffic as the Gateway API asks
// while every endpoint of the rule stays in the one cluster a session can be pinned within.
//
// weight 0: Envoy's locality without a weight is "assigned no load" and an explicit 0 is
// forbidden, so a weight-0 backendRef keeps its endpoints in the cluster (stateful_session can
// still pin them, looking hosts up across the whole cluster) and receives no new traffic.
//
// Backends that need another upstream protocol, their own BackendTLSPolicy or their own
// header modifiers cannot share a cluster: they get clusters of their own and the route splits
// by weight between them. Unresolved backendRefs get a share of that split that names no
// cluster: "the proportion of requests that would otherwise have been routed to an invalid
// backend MUST receive a 500 status code".
import { exact } from '../json.js';
import type { TableBackend, TableBackendTls, TableRouteKind, TableRule } from '../policy/policy-table.js';
import type { HeaderModifier } from '../policy/route-filters.js';
import { type ClusterProtocol, clusterProtocol } from './cluster-protocol.js';

/** BackendTLSPolicy as the connection needs it: which policy it came from does not matter. */
export type IrClusterTls = Omit<TableBackendTls, 'policy'>;

/** One backendRef's endpoints inside a cluster. */
export interface IrLocality {
  /** The backendRef's id (`<ns>/<service>:<port>`). */
  readonly zone: string;
  /** 0: the endpoints stay selectable for a pinned session and get no new traffic. */
  readonly weight: number;
  /** The ready endpoints ("ready: false" endpoints get no traffic; a session pinned to one falls back). */
  readonly endpoints: readonly { readonly address: string; readonly port: number }[];
}

/** What a cluster is made of: two clusters with equal content are one. */
export interface IrClusterContent {
  readonly protocol: ClusterProtocol;
  readonly localities: readonly IrLocality[];
  /** Some endpoint is a DNS name: the cluster resolves them. */
  readonly dns: boolean;
  /**
   * XBackendTrafficPolicy retryConstraint, the strictest of the cluster's backends: at most
   * `percent` of active requests may be retries, and at least `minConcurrency` may run at
   * once. None: GEP-1731 sets no limit.
   */
  readonly retryBudget?: { readonly percent: number; readonly minConcurrency: number };
  /**
   * Its rules' retries wait for a backoff floor: the cluster runs the filter's upstream half,
   * which reads each retry's floor from the route's policy token. False: no request pays for it.
   */
  readonly holdsRetries: boolean;
  readonly tls?: IrClusterTls;
}

/** Where a rule sends requests: a cluster (or a name that names none: 500), with its share. */
export interface IrTarget {
  readonly cluster: string;
  /** Sum of the group's backendRef weights. */
  readonly weight: number;
  /** A backendRef's own header modifiers: such a backend is a group (a cluster) of its own. */
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
}

export interface IrMirror {
  readonly cluster: string;
  /** Share of requests mirrored, in millionths. */
  readonly perMillion: number;
}

/** A rule's own clusters, named after the rule; sharing renames them. */
export interface RuleClusters {
  /** Each cluster's own name, its content, and that content but the endpoints as a key. */
  readonly clusters: readonly {
    readonly name: string;
    readonly content: IrClusterContent;
    readonly key: string;
  }[];
  readonly targets: readonly IrTarget[];
  /** RequestMirror targets: each its own cluster, named `<rule id>/mirror/<i>`. */
  readonly mirrors: readonly IrMirror[];
  /** Some targets name no cluster (unresolved backendRefs): their share answers 500. */
  readonly unresolved: boolean;
  /** The rule has a ws or wss backend: its route allows the WebSocket upgrade. */
  readonly websocket: boolean;
}

interface Group {
  /** The protocol, the BackendTLSPolicy, own header modifiers: backends differing in one need their own cluster. */
  readonly key: string;
  readonly protocol: ClusterProtocol | 'invalid';
  readonly tls?: TableBackendTls;
  readonly backends: TableBackend[];
}

/** The strictest retryConstraint among the backends of one cluster. */
function retryBudget(backends: readonly TableBackend[]): IrClusterContent['retryBudget'] {
  const constraints = backends.flatMap((b) => (b.retryConstraint ? [b.retryConstraint] : []));
  if (constraints.length === 0) return undefined;
  return {
    percent: Math.min(...constraints.map((c) => c.budgetPercent)),
    minConcurrency: Math.min(...constraints.map((c) => c.minRetryCount)),
  };
}

function content(
  protocol: ClusterProtocol,
  backends: readonly TableBackend[],
  holdsRetries: boolean,
  tls: TableBackendTls | undefined,
): IrClusterContent {
  const budget = retryBudget(backends);
  return {
    protocol,
    localities: backends.map((b) => ({
      zone: b.id,
      weight: b.weight,
      endpoints: b.endpoints.filter((e) => e.ready).map((e) => ({ address: e.address, port: e.port })),
    })),
    dns: backends.some((b) => b.endpoints.some((e) => e.type === 'fqdn')),
    ...(budget ? { retryBudget: budget } : {}),
    holdsRetries,
    ...(tls
      ? {
          tls: {
            hostname: tls.hostname,
            subjectAltNames: tls.subjectAltNames,
            ...(tls.caCertificates !== undefined ? { caCertificates: tls.caCertificates } : {}),
            ...(tls.clientCertificate !== undefined ? { clientCertificate: tls.clientCertificate } : {}),
          },
        }
      : {}),
  };
}

/**
 * The content but the endpoints: what names a cluster, so that an EndpointSlice change keeps
 * the cluster's name (and the routes naming it) and only its endpoints change. Within one
 * build a locality's zone (a Service port) decides its endpoints, so equal keys are one cluster.
 */
function clusterKey(c: IrClusterContent): string {
  return JSON.stringify({ ...c, localities: c.localities.map((l) => ({ zone: l.zone, weight: l.weight })) });
}

/** A rule's own cluster: named after it, with the group when the rule has several. */
function ownName(rule: TableRule, group?: string): string {
  return group === undefined ? rule.id : `${rule.id}/${group}`;
}

export function ruleClusters(kind: TableRouteKind, rule: TableRule, holdsRetries: boolean): RuleClusters {
  const groups: Group[] = [];
  for (const [index, b] of rule.backends.entries()) {
    const protocol = b.invalid ? 'invalid' : clusterProtocol(kind, b.protocol);
    const tls = b.invalid ? undefined : b.tls;
    const filtered = b.requestHeaders !== undefined || b.responseHeaders !== undefined;
    const key = `${tls ? `${protocol}+${tls.policy}+${tls.clientCertificate ?? ''}` : protocol}${filtered && !b.invalid ? `+backend-${index}` : ''}`;
    let g = groups.find((x) => x.key === key);
    if (!g) groups.push((g = { key, protocol, ...(tls ? { tls } : {}), backends: [] }));
    g.backends.push(b);
  }
  const single = groups.length === 1 && groups[0]?.key !== 'invalid';
  const clusters: RuleClusters['clusters'][number][] = [];
  const made = (name: string, c: IrClusterContent) => clusters.push({ name, content: c, key: clusterKey(c) });
  const targets: IrTarget[] = [];
  for (const g of groups) {
    const name = ownName(rule, single ? undefined : g.key);
    if (g.protocol !== 'invalid') made(name, content(g.protocol, g.backends, holdsRetries, g.tls));
    const first = g.backends[0];
    targets.push({
      cluster: name,
      weight: g.backends.reduce((sum, b) => sum + b.weight, 0),
      ...(first?.requestHeaders && !first.invalid ? { requestHeaders: first.requestHeaders } : {}),
      ...(first?.responseHeaders && !first.invalid ? { responseHeaders: first.responseHeaders } : {}),
    });
  }
  const mirrors: IrMirror[] = [];
  (rule.mirrors ?? []).forEach((m, i) => {
    if (m.backend.invalid) return;
    const name = `${rule.id}/mirror/${i}`;
    // A mirror's copy is never retried: its cluster needs no backoff hold.
    made(name, content(clusterProtocol(kind, m.backend.protocol), [m.backend], false, m.backend.tls));
    mirrors.push({ cluster: name, perMillion: m.perMillion });
  });
  // Kept by the IR for as long as the rule is: exactly as long as they are.
  return {
    clusters: exact(clusters),
    targets: exact(targets),
    mirrors,
    unresolved: groups.some((g) => g.key === 'invalid'),
    websocket: groups.some((g) => g.protocol === 'ws' || g.protocol === 'wss'),
  };
}
