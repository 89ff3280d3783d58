// What one gateway-mode generation keeps for the next, so that a change to one route does not
// generate the Envoy configuration of the other 9,999 again. Its keys are the IR's own objects:
// an unchanged rule's entries and clusters stay the same objects from one IR to the next
// (ir/ir-memo.ts), so what was made from them still holds. Everything kept is a pure function
// of what it is keyed by and of the options the memo was made for; a test holds a memoized
// generation equal to a fresh one after random edit sequences. The generated objects are
// shared from one generation to the next, so nothing downstream may change them (none does:
// they are encoded or serialized, never edited).
import type { IrCluster } from '../ir/cluster-sharing.js';
import type { IrEntry } from '../ir/rule-action.js';
import { type Json, sameItems } from '../json.js';

/** An entry's routes, and the route options they were made for. */
interface KeptRoutes {
  readonly options: string;
  readonly routes: readonly Json[];
}

/** One virtual host, and the routes it was made of. */
interface KeptHost {
  readonly parts: readonly (readonly Json[])[];
  readonly host: Json;
}

export class GenerationMemo {
  /** Each cluster's Envoy resource, by the IR cluster. */
  readonly clusters = new WeakMap<IrCluster, Json>();
  /**
   * By entry, its routes under the route options they were made for; a map by options only for
   * an entry made under two (a route served on two ports): a map per entry held 3.4 MiB at
   * 10,000 routes, most of it empty hash table.
   */
  private readonly entryRoutes = new WeakMap<IrEntry, KeptRoutes | Map<string, readonly Json[]>>();
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

  /** An entry's routes under these route options. */
  routes(entry: IrEntry, options: string, make: () => readonly Json[]): readonly Json[] {
    const kept = this.entryRoutes.get(entry);
    if (kept instanceof Map) {
      let routes = kept.get(options);
      if (!routes) kept.set(options, (routes = make()));
      return routes;
    }
    if (kept?.options === options) return kept.routes;
    const routes = make();
    this.entryRoutes.set(
      entry,
      kept
        ? new Map([
            [kept.options, kept.routes],
            [options, routes],
          ])
        : { options, routes },
    );
    return routes;
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
