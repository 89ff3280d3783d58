// Rules whose clusters have the same content share one cluster (10,000 routes to one Service
// made 10,000 identical clusters). Same content means the same backends with the same weights
// and ready endpoints, protocol, BackendTLSPolicy, retry budget and whether it holds
// retries for a backoff floor (not the floor: the filter reads that from the route's token): a session pins
// a host by its address, which the shared cluster holds exactly as each rule's own did, and a
// weight-0 backendRef stays a locality without load. What the rules then share is the
// cluster's connection pool, circuit breakers, outlier detection and retry budget, as requests
// to one Service do. The name comes from the content but the endpoints — the backendRefs' zones
// and a hash — so it does not change when rules come or go nor when a Service's endpoints do
// (over ADS those travel apart, as the cluster's ClusterLoadAssignment), and every replica
// computes the same one.
import { createHash } from 'node:crypto';
import type { TableRoute } from '../policy/policy-table.js';
import type { IrClusterContent, IrMirror, IrTarget, RuleClusters } from './rule-clusters.js';

/** A cluster the routes name: its content, under the name every rule that needs it uses. */
export interface IrCluster extends IrClusterContent {
  /** `backend/<zones>/<hash>` */
  readonly name: string;
}

/** A rule's targets and mirrors under the shared clusters' names. */
export interface SharedTargets {
  readonly targets: readonly IrTarget[];
  readonly mirrors: readonly IrMirror[];
}

function clusterName(content: IrClusterContent, key: string): string {
  const zones = content.localities.map((l) => l.zone);
  const shown = zones.length > 3 ? [...zones.slice(0, 3), `${zones.length - 3}-more`] : zones;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  return `backend/${shown.join('+')}/${hash}`;
}

/** What names a build's clusters: ClusterNames, or a kept build's names read alone (build-ir.ts). */
export interface NamingClusters {
  /** The cluster of this content (`key`: it but the endpoints), and whether this build named it first. */
  cluster(content: IrClusterContent, key: string): { cluster: IrCluster; first: boolean };
}

/**
 * A build's clusters in order, as build-ir.ts decide keeps them for the next: the routes they
 * come from, and per cluster the index of the route that named it first, and by key its place.
 */
export interface DecidedClusters {
  readonly routes: readonly TableRoute[];
  readonly clusters: readonly IrCluster[];
  readonly firstAt: readonly number[];
  readonly position: ReadonlyMap<string, number>;
}

/** The same endpoints, locality by locality (the rest of two contents of one key is equal). */
function sameEndpoints(a: IrClusterContent, b: IrClusterContent): boolean {
  return JSON.stringify(a.localities) === JSON.stringify(b.localities);
}

/**
 * Names clusters by content but endpoints, keeping each cluster object from one build to the
 * next while its whole content is the same (what is generated from it in envoy/ is kept by
 * that object); new endpoints make a new object under the same name.
 */
export class ClusterNames implements NamingClusters {
  private last = new Map<string, IrCluster>();
  private next = new Map<string, IrCluster>();

  /** Starts a build: clusters the last one named and this one does not are let go at its end. */
  begin(): void {
    this.next = new Map();
  }

  end(): void {
    this.last = this.next;
    this.next = new Map();
  }

  /** The cluster of this content (`key`: it but the endpoints), and whether this build named it first. */
  cluster(content: IrClusterContent, key: string): { cluster: IrCluster; first: boolean } {
    const named = this.next.get(key);
    if (named) return { cluster: named, first: false };
    const last = this.last.get(key);
    const cluster =
      last && sameEndpoints(last, content)
        ? last
        : { name: last?.name ?? clusterName(content, key), ...content };
    this.next.set(key, cluster);
    return { cluster, first: true };
  }
}

/**
 * Names a rule's own clusters in this build: `out` gets each cluster the first time a build
 * names it, in order. What a rule kept from the last build does: its targets name them already.
 */
export function nameRuleClusters(
  rc: RuleClusters,
  names: NamingClusters,
  out: IrCluster[],
  keys?: string[],
): void {
  for (const c of rc.clusters) {
    const { cluster, first } = names.cluster(c.content, c.key);
    if (first) {
      out.push(cluster);
      keys?.push(c.key);
    }
  }
}

/**
 * A rule's own clusters under their shared names: `out` gets each cluster the first time a
 * build names it, in order.
 */
export function shareRuleClusters(
  rc: RuleClusters,
  names: NamingClusters,
  out: IrCluster[],
  keys?: string[],
): SharedTargets {
  const renamed = new Map<string, string>();
  for (const c of rc.clusters) {
    const { cluster, first } = names.cluster(c.content, c.key);
    if (first) {
      out.push(cluster);
      keys?.push(c.key);
    }
    renamed.set(c.name, cluster.name);
  }
  // Targets that name no cluster (unresolved backendRefs) keep their name: it still names none.
  const rename = (n: string): string => renamed.get(n) ?? n;
  return {
    targets: rc.targets.map((t) => ({ ...t, cluster: rename(t.cluster) })),
    mirrors: rc.mirrors.map((m) => ({ ...m, cluster: rename(m.cluster) })),
  };
}
