// What one gateway-mode generation keeps for the next, so that a change to one route does not
// generate the Envoy configuration of the other 9,999 again. Its keys are the table's own
// objects: the service reuses a route's objects from one table to the next while the route's
// JSON is the same (pipeline/table-json.ts), so an unchanged rule is the same object, and
// what was made from it still holds. Everything kept is a pure function of what it is keyed
// by and of the options the memo was made for; a test holds a memoized generation equal to a
// fresh one after random edit sequences. The generated objects are shared from one
// generation to the next, so nothing downstream may change them (none does: they are
// encoded or serialized, never edited).
import type { TableMatch, TableRule } from '../table/policy-table.js';
import { type Json, sameItems } from '../json.js';
import type { RuleClusters, SharedClusters } from './rule-clusters.js';

/** The Envoy routes of one match, and what they were made with. */
interface MatchRoutes {
  readonly clusters: RuleClusters | undefined;
  readonly options: string;
  readonly routes: readonly Json[];
  /** The rule holds retries to a backoff floor: its virtual host counts attempts. */
  readonly backoff: boolean;
}

/** One virtual host, and the routes it was made of. */
interface KeptHost {
  readonly parts: readonly (readonly Json[])[];
  readonly host: Json;
}

export class GenerationMemo implements SharedClusters {
  /** Each rule's own clusters (before sharing), by the rule. */
  readonly ruleClusters = new WeakMap<TableRule, RuleClusters>();
  /** Each rule's clusters after sharing, by rule id, with the own clusters they came from. */
  shared = new Map<string, { readonly from: RuleClusters; readonly out: RuleClusters }>();
  /** By match, then by the route options (a match a route serves on two ports has two). */
  private readonly matchRoutes = new WeakMap<TableMatch, Map<string, MatchRoutes>>();
  private hosts = new Map<string, KeptHost>();
  private nextHosts = new Map<string, KeptHost>();
  /** Virtual hosts made anew in the current (or last) generation; the rest were kept. */
  madeHosts = 0;

  /** A memo serves only the options it was made for (the same object): the clusters and routes depend on them. */
  constructor(readonly options: object) {}

  /** Starts a generation: what the last one kept and this one does not use is let go at its end. */
  begin(): void {
    this.nextHosts = new Map();
    this.madeHosts = 0;
  }

  end(): void {
    this.hosts = this.nextHosts;
    this.nextHosts = new Map();
  }

  /** A match's routes: kept while its rule's clusters (after sharing) and the route options are the same. */
  routes(
    match: TableMatch,
    clusters: RuleClusters | undefined,
    options: string,
    make: () => Omit<MatchRoutes, 'clusters' | 'options'>,
  ): MatchRoutes {
    let byOptions = this.matchRoutes.get(match);
    if (!byOptions) this.matchRoutes.set(match, (byOptions = new Map()));
    const kept = byOptions.get(options);
    if (kept && kept.clusters === clusters) return kept;
    const made = { ...make(), clusters, options };
    byOptions.set(options, made);
    return made;
  }

  /** A virtual host: kept while it is made of the same routes, in the same order. */
  host(key: string, parts: readonly (readonly Json[])[], make: () => Json): Json {
    const kept = this.hosts.get(key);
    let host: KeptHost;
    if (kept && sameItems(kept.parts, parts)) {
      host = kept;
    } else {
      host = { parts, host: make() };
      this.madeHosts++;
    }
    this.nextHosts.set(key, host);
    return host.host;
  }
}
