// A map made of a larger one, shared with the maps it was made from, and the few entries changed
// since: a change to one hostname among 10,000 makes a new map for the new resolver without
// copying the 10,000 (compile.ts), while the last resolver keeps reading its own. The changes
// are folded into a new larger map once they are many.
/** Changes kept apart before they are folded into a copy of the larger map. */
const FOLD_AFTER = 256;

export class LayeredMap<V> {
  private constructor(
    private readonly base: ReadonlyMap<string, V>,
    /** Keys changed since `base`: their value, or undefined for a key taken out. */
    private readonly changes: ReadonlyMap<string, V | undefined>,
  ) {}

  static of<V>(map: ReadonlyMap<string, V>): LayeredMap<V> {
    return new LayeredMap(map, new Map());
  }

  get(key: string): V | undefined {
    const changed = this.changes.get(key);
    if (changed !== undefined) return changed;
    return this.changes.has(key) ? undefined : this.base.get(key);
  }

  /** A new map: this one with `changes` made (undefined takes the key out); this one stays as it is. */
  with(changes: ReadonlyMap<string, V | undefined>): LayeredMap<V> {
    const all = new Map([...this.changes, ...changes]);
    if (all.size <= FOLD_AFTER) return new LayeredMap(this.base, all);
    const base = new Map(this.base);
    for (const [key, value] of all) {
      if (value === undefined) base.delete(key);
      else base.set(key, value);
    }
    return LayeredMap.of(base);
  }
}
