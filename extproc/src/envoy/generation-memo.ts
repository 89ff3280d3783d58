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

/** One virtual host, and the routes it was made of. */
interface KeptHost {
  readonly parts: readonly (readonly Json[])[];
  readonly host: Json;
}

export class GenerationMemo {
  /** Each cluster's Envoy resource, by the IR cluster. */
  readonly clusters = new WeakMap<IrCluster, Json>();
  /** By entry, then by the route options (an entry a route serves on two ports has two). */
  private readonly entryRoutes = new WeakMap<IrEntry, Map<string, readonly Json[]>>();
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
    let byOptions = this.entryRoutes.get(entry);
    if (!byOptions) this.entryRoutes.set(entry, (byOptions = new Map()));
    let routes = byOptions.get(options);
    if (!routes) byOptions.set(options, (routes = make()));
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
