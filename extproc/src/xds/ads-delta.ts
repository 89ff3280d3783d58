// Incremental (delta) xDS for one stream: what the Envoy holds of each type, resource by
// resource (name → content hash), so that a push carries only the resources whose content
// changed and the names of those gone. State of the world sends every resource of the type.
//
// A refused push leaves the Envoy with what it had: the state goes back to before it, so the
// next push sends those resources again. On a new stream the Envoy says what it still holds
// (initial_resource_versions): every resource is sent again (a reconnect gets the full
// state), and what it holds that no longer exists is removed by name.
import type { Any, Resource } from './ads-resource.js';

export interface DeltaPush {
  readonly resources: readonly { name: string; version: string; resource: Any }[];
  readonly removed_resources: readonly string[];
}

/** What a delta stream's Envoy holds, per type; undefined per type until the first push of it. */
export class DeltaState {
  private readonly held = new Map<string, ReadonlyMap<string, string>>();
  /** Per type, what it held before the last push, for a refusal. */
  private readonly before = new Map<string, ReadonlyMap<string, string> | undefined>();

  /**
   * The push that brings the Envoy from what it holds to `resources`, or undefined when it
   * holds them already (the first push of a type is always sent: Envoy waits for it).
   */
  push(type: string, resources: readonly Resource[]): DeltaPush | undefined {
    const had = this.held.get(type);
    const changed = had ? resources.filter((r) => had.get(r.name) !== r.hash) : resources;
    const now = new Map(resources.map((r) => [r.name, r.hash]));
    const removed = had ? [...had.keys()].filter((n) => !now.has(n)) : [];
    if (had && changed.length === 0 && removed.length === 0) return undefined;
    this.before.set(type, had);
    this.held.set(type, now);
    return {
      resources: changed.map((r) => ({ name: r.name, version: r.hash, resource: r.any })),
      removed_resources: removed,
    };
  }

  /** The last push of `type` was refused: the Envoy kept what it had. */
  refused(type: string): void {
    if (!this.before.has(type)) return;
    const had = this.before.get(type);
    if (had) this.held.set(type, had);
    else this.held.delete(type);
    this.before.delete(type);
  }

  /** Names the Envoy no longer asks for: forgotten, so asking again sends them again. */
  unsubscribed(type: string, names: readonly string[]): void {
    if (names.length === 0) return;
    const gone = new Set(names);
    this.forget(type, (n) => gone.has(n));
  }

  /**
   * Resources of `type` the Envoy let go without naming them (a virtual host goes with its route
   * configuration): forgotten, also in what a refusal of the last push goes back to, so that
   * they are sent again when asked for and never removed by name meanwhile.
   */
  forget(type: string, which: (name: string) => boolean): void {
    const without = (had: ReadonlyMap<string, string>) => new Map([...had].filter(([n]) => !which(n)));
    const held = this.held.get(type);
    if (held) this.held.set(type, without(held));
    const before = this.before.get(type);
    if (before) this.before.set(type, without(before));
  }

  /** A new stream: what the Envoy still holds, by name; each is sent again or removed. */
  initial(type: string, names: readonly string[]): void {
    if (names.length === 0 || this.held.has(type)) return;
    // No hash matches '': everything that exists is sent, and the rest removed.
    this.held.set(type, new Map(names.map((n) => [n, ''])));
  }
}
