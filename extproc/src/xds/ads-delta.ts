// Incremental (delta) xDS for one stream: what the Envoy holds of each type, resource by
// resource (name → content hash), so that a push carries only the resources whose content
// changed and the names of those gone. State of the world sends every resource of the type.
//
// A refused push leaves the Envoy with what it had: the state goes back to before it, so the
// next push sends those resources again. On a new stream the Envoy says what it still holds
// (initial_resource_versions): every resource is sent again (a reconnect gets the full
// state), and what it holds that no longer exists is removed by name.
//
// A type held as a generation's whole map (ads-delta-step.ts) is held by reference, not copied,
// and the step to the next generation's is worked out once for every stream taking it.
import type { Resource } from './ads-resource.js';
import { type DeltaPush, type Whole, deltaPush, isWhole, step } from './ads-delta-step.js';

/** What the Envoy holds of a type: a generation's whole map itself, or its own record (name → hash). */
type Held = { readonly whole: Whole } | { readonly own: ReadonlyMap<string, string> };

function hashIn(held: Held, name: string): string | undefined {
  return 'whole' in held ? held.whole.get(name)?.hash : held.own.get(name);
}

function namesIn(held: Held): Iterable<string> {
  return 'whole' in held ? held.whole.keys() : held.own.keys();
}

/** What a delta stream's Envoy holds, per type; undefined per type until the first push of it. */
export class DeltaState {
  private readonly held = new Map<string, Held>();
  /** Per type, what it held before the last push, for a refusal. */
  private readonly before = new Map<string, Held | undefined>();

  /**
   * The push that brings the Envoy from what it holds to `selected` (a list, or a generation's
   * whole map of the type), or undefined when it holds that already (the first push of a type is
   * always sent: Envoy waits for it).
   */
  push(type: string, selected: readonly Resource[] | Whole): DeltaPush | undefined {
    const had = this.held.get(type);
    const push = had && 'whole' in had && isWhole(selected) ? step(had.whole, selected) : diff(had, selected);
    const same = had && push.resources.length === 0 && push.removed_resources.length === 0;
    // The same content as a whole map: held as the newer one, so its next step is the others' too.
    if (same && isWhole(selected)) this.held.set(type, { whole: selected });
    if (same) return undefined;
    this.before.set(type, had);
    this.held.set(
      type,
      isWhole(selected) ? { whole: selected } : { own: new Map(selected.map((r) => [r.name, r.hash])) },
    );
    return push;
  }

  /**
   * The push that brings the Envoy these resources where it holds them otherwise, and removes the
   * names it holds that `removing` says and the list lacks; what it holds besides stays held.
   * Undefined when there is nothing to send.
   */
  add(
    type: string,
    resources: readonly Resource[],
    removing: (name: string) => boolean,
  ): DeltaPush | undefined {
    const had = this.held.get(type);
    const changed = resources.filter((r) => !had || hashIn(had, r.name) !== r.hash);
    const listed = new Set(resources.map((r) => r.name));
    const removed = had ? [...namesIn(had)].filter((n) => removing(n) && !listed.has(n)) : [];
    if (changed.length === 0 && removed.length === 0) return undefined;
    this.before.set(type, had);
    const own = new Map(had ? [...namesIn(had)].map((n) => [n, hashIn(had, n) ?? '']) : []);
    for (const n of removed) own.delete(n);
    for (const r of changed) own.set(r.name, r.hash);
    this.held.set(type, { own });
    return deltaPush(changed, removed);
  }

  /** The version (content hash) the Envoy holds of a resource: '' when it said it holds it on a new stream. */
  holds(type: string, name: string): string | undefined {
    const had = this.held.get(type);
    return had ? hashIn(had, name) : undefined;
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
    const without = (had: Held): Held => ({
      own: new Map([...namesIn(had)].filter((n) => !which(n)).map((n) => [n, hashIn(had, n) ?? ''])),
    });
    const held = this.held.get(type);
    if (held) this.held.set(type, without(held));
    const before = this.before.get(type);
    if (before) this.before.set(type, without(before));
  }

  /** A new stream: what the Envoy still holds, by name; each is sent again or removed. */
  initial(type: string, names: readonly string[]): void {
    if (names.length === 0 || this.held.has(type)) return;
    // No hash matches '': everything that exists is sent, and the rest removed.
    this.held.set(type, { own: new Map(names.map((n) => [n, ''])) });
  }
}

/** The push from what is held (nothing: the first push) to `selected`, stream by stream. */
function diff(had: Held | undefined, selected: readonly Resource[] | Whole): DeltaPush {
  const list = isWhole(selected) ? [...selected.values()] : selected;
  if (!had) return deltaPush(list, []);
  const now = isWhole(selected) ? selected : new Set(list.map((r) => r.name));
  const changed = list.filter((r) => hashIn(had, r.name) !== r.hash);
  return deltaPush(
    changed,
    [...namesIn(had)].filter((n) => !now.has(n)),
  );
}
