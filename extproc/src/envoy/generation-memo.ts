// What one gateway-mode generation keeps for the next, so that a change to one route does not
// generate the Envoy configuration of the other 9,999 again. Its keys are the IR's own objects:
// an unchanged rule's entries and clusters stay the same objects from one IR to the next
// (ir/ir-memo.ts), so what was made from them still holds. Everything kept is a pure function
// of what it is keyed by and of the options the memo was made for; a test holds a memoized
// generation equal to a fresh one after random edit sequences. The generated objects are
// shared from one generation to the next, so nothing downstream may change them (none does:
// they are encoded or serialized, never edited).
import type { IrCluster } from '../ir/cluster-sharing.js';
import type { IrVirtualHost } from '../ir/gateway-ir.js';
import type { IrEntry } from '../ir/rule-action.js';
import { type Json, sameItems } from '../json.js';

/** An entry's routes, and the route options they were made for. */
interface KeptRoutes {
  readonly options: string;
  readonly routes: readonly Json[];
}

/** One virtual host, the routes it was made of, and the last generation that used it. */
interface KeptHost {
  readonly parts: readonly (readonly Json[])[];
  readonly host: Json;
  used: number;
}

/** What an IR virtual host was last spelled out as: in which route configuration, under which options. */
interface KeptIrHost {
  readonly name: string;
  readonly options: string;
  readonly key: string;
  readonly kept: KeptHost;
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
  /** By key; one a generation does not use is let go at its end. */
  private readonly hosts = new Map<string, KeptHost>();
  /**
   * By IR virtual host, which stays the same object while its routes do (ir/port-hosts-memo.ts):
   * an unchanged host is found without walking its entries, so a generation costs a lookup per host.
   */
  private readonly irHosts = new WeakMap<IrVirtualHost, KeptIrHost>();
  private generation = 0;
  /** Kept hosts the current generation used. */
  private used = 0;
  /** Virtual hosts made anew in the current (or last) generation; the rest were kept. */
  madeHosts = 0;

  /** A memo serves only the options it was made for (the same object): the clusters and routes depend on them. */
  constructor(readonly options: object) {}

  /** Starts a generation: what the last one kept and this one does not use is let go at its end. */
  begin(): void {
    this.generation++;
    this.used = 0;
    this.madeHosts = 0;
  }

  end(): void {
    if (this.hosts.size === this.used) return;
    for (const [key, kept] of this.hosts) if (kept.used !== this.generation) this.hosts.delete(key);
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

  /** What IR host `vh` became in route configuration `name` under route `options`, while it is the same object. */
  keptHost(vh: IrVirtualHost, name: string, options: string): Json | undefined {
    const was = this.irHosts.get(vh);
    if (was?.name !== name || was.options !== options || this.hosts.get(was.key) !== was.kept)
      return undefined;
    this.use(was.kept);
    return was.kept.host;
  }

  /** A virtual host by its key: kept while it is made of the same routes, in the same order. */
  host(
    vh: IrVirtualHost,
    name: string,
    options: string,
    key: string,
    parts: readonly (readonly Json[])[],
    make: () => Json,
  ): Json {
    let kept = this.hosts.get(key);
    if (!kept || !sameItems(kept.parts, parts)) {
      if (kept?.used === this.generation) this.used--;
      kept = { parts, host: make(), used: 0 };
      this.hosts.set(key, kept);
      this.madeHosts++;
    }
    this.use(kept);
    this.irHosts.set(vh, { name, options, key, kept });
    return kept.host;
  }

  private use(kept: KeptHost): void {
    if (kept.used === this.generation) return;
    kept.used = this.generation;
    this.used++;
  }
}
