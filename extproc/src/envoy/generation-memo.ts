// What one gateway-mode generation keeps for the next, so that a change to one route does not
// generate the Envoy configuration of the other 9,999 again. Its keys are the IR's own objects:
// an unchanged rule's entries and clusters stay the same objects from one IR to the next
// (ir/ir-memo.ts), so what was made from them still holds. Everything kept is a pure function
// of what it is keyed by and of the options the memo was made for; a test holds a memoized
// generation equal to a fresh one after random edit sequences. The generated objects are
// shared from one generation to the next, so nothing downstream may change them (none does:
// they are encoded or serialized, never edited).
//
// A virtual host is kept as what `keep` makes of it: the ADS server and the route file writer
// keep its encoding (xds/route-files.ts keepHost), so that no host's JSON outlives the generation
// that made it (with its routes' ~3 MiB of live heap at bench:scale's 10,000 routes, docs/fleet.md
// "Memory"); their route configurations then list those encodings in place of the hosts' JSON.
// An entry's routes are kept only where its host has others (routes()).
import type { IrCluster } from '../ir/cluster-sharing.js';
import type { IrVirtualHost } from '../ir/gateway-ir.js';
import type { IrEntry } from '../ir/rule-action.js';
import { type Json, sameEnds, sameItems } from '../json.js';

/**
 * One virtual host, under its key: in which route configuration and under which options it was
 * made, of what (the same objects), and what it is kept as. Also what each IR host it was made
 * for was last spelled out as (irHosts).
 */
interface KeptHost {
  readonly key: string;
  readonly name: string;
  readonly options: string;
  readonly parts: readonly unknown[];
  readonly host: Json;
}

/**
 * A route configuration's virtual hosts as the last generation made them: from which IR hosts,
 * under which options, and the kept host behind each.
 */
interface KeptConfiguration {
  readonly options: string;
  readonly irHosts: readonly IrVirtualHost[];
  readonly hosts: readonly Json[];
  readonly kept: readonly KeptHost[];
  generation: number;
}

export class GenerationMemo {
  /** Each cluster's Envoy resource, by the IR cluster. */
  readonly clusters = new WeakMap<IrCluster, Json>();
  /** By entry of a host of several, its routes and the route options they were made for (the last ones only). */
  private readonly entryRoutes = new WeakMap<
    IrEntry,
    { readonly options: string; readonly routes: readonly Json[] }
  >();
  /** By key: the hosts the route configurations as last made hold (one they no longer hold is let go). */
  private hosts = new Map<string, KeptHost>();
  /** A generation begun and not ended. */
  private open = false;
  /**
   * By IR virtual host, which stays the same object while its routes do (ir/port-hosts-memo.ts):
   * an unchanged host is found without walking its entries, so a generation costs a lookup per host.
   */
  private readonly irHosts = new WeakMap<IrVirtualHost, KeptHost>();
  /** By route configuration name: its hosts as last made, so that the next looks at what changed alone. */
  private readonly configurations = new Map<string, KeptConfiguration>();
  private generation = 0;
  /** Virtual hosts made anew in the current (or last) generation; the rest were kept. */
  madeHosts = 0;

  /**
   * An entry's routes under these route options, kept while its host has other entries: a change
   * to one of a hostname's many routes spells out that one alone, while a host of one entry
   * (made anew only when that entry changed) keeps no JSON.
   */
  routes(entry: IrEntry, options: string, make: () => readonly Json[]): readonly Json[] {
    const kept = this.entryRoutes.get(entry);
    if (kept?.options === options) return kept.routes;
    const routes = make();
    this.entryRoutes.set(entry, { options, routes });
    return routes;
  }

  /** Virtual hosts held for the next generation: those of the route configurations last made. */
  get keptHosts(): number {
    return this.hosts.size;
  }

  /**
   * A memo serves only the options it was made for (the same object): the clusters and routes
   * depend on them. `keep`: what a host made anew is kept as, for the route configuration named
   * (by default its JSON).
   */
  constructor(
    readonly options: object,
    private readonly keep: (host: Json, configuration: string) => Json = (host) => host,
  ) {}

  /** Starts a generation: the route configurations it does not make are let go at its end. */
  begin(): void {
    // One that failed halfway may have made hosts no configuration holds: only the held stay.
    if (this.open) {
      this.hosts = new Map([...this.configurations.values()].flatMap((c) => c.kept.map((k) => [k.key, k])));
    }
    this.open = true;
    this.generation++;
    this.madeHosts = 0;
  }

  end(): void {
    for (const [name, c] of this.configurations) {
      if (c.generation === this.generation) continue;
      this.letGo(c.kept, undefined);
      this.configurations.delete(name);
    }
    this.open = false;
  }

  /** Lets go of the hosts of `kept` that are not in `still`, unless another has their key now. */
  private letGo(kept: readonly KeptHost[], still: ReadonlySet<KeptHost> | undefined): void {
    for (const k of kept) if (!still?.has(k) && this.hosts.get(k.key) === k) this.hosts.delete(k.key);
  }

  /**
   * Route configuration `name`'s virtual hosts, one per IR host, under route `options`. The IR
   * hosts at the same place as in its last list, counted from the start or from the end (the
   * same objects: ir/port-hosts-memo.ts keeps them), are what they were made as then; only
   * those between are looked up or made (`make`, which calls host()), so a one-route change
   * costs the change, not a lookup per host.
   */
  virtualHosts(
    name: string,
    options: string,
    irHosts: readonly IrVirtualHost[],
    make: (vh: IrVirtualHost) => Json,
  ): Json[] {
    const last = this.configurations.get(name);
    const { start, end } = last?.options === options ? sameEnds(last.irHosts, irHosts) : { start: 0, end: 0 };
    const madeHosts: Json[] = [];
    const madeKept: KeptHost[] = [];
    for (let i = start; i < irHosts.length - end; i++) {
      const vh = irHosts[i] as IrVirtualHost;
      madeHosts.push(this.keptHost(vh, name, options) ?? make(vh));
      madeKept.push(this.irHosts.get(vh) as KeptHost);
    }
    const ends = <T>(list: readonly T[] | undefined, middle: T[]): T[] =>
      list ? list.slice(0, start).concat(middle, list.slice(list.length - end)) : middle;
    const hosts = ends(last?.hosts, madeHosts);
    const kept = ends(last?.kept, madeKept);
    // The hosts the last list had between its ends, unless this one has them again.
    if (last) this.letGo(last.kept.slice(start, last.kept.length - end), new Set(madeKept));
    this.configurations.set(name, { options, irHosts, hosts, kept, generation: this.generation });
    return hosts;
  }

  /** What IR host `vh` became in route configuration `name` under route `options`, while it is the same object. */
  private keptHost(vh: IrVirtualHost, name: string, options: string): Json | undefined {
    const was = this.irHosts.get(vh);
    if (was?.name !== name || was.options !== options || this.hosts.get(was.key) !== was) return undefined;
    return was.host;
  }

  /**
   * A virtual host by its key: kept while it is made for the same route configuration, under the
   * same options, of the same parts (its IR entries), in the same order; made anew, it is kept
   * as `keep` makes it.
   */
  host(
    vh: IrVirtualHost,
    name: string,
    options: string,
    key: string,
    parts: readonly unknown[],
    make: () => Json,
  ): Json {
    let kept = this.hosts.get(key);
    if (kept?.name !== name || kept.options !== options || !sameItems(kept.parts, parts)) {
      kept = { key, name, options, parts, host: this.keep(make(), name) };
      this.hosts.set(key, kept);
      this.madeHosts++;
    }
    this.irHosts.set(vh, kept);
    return kept.host;
  }
}
