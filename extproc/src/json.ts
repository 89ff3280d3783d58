// A JSON object as the Envoy generators build it: plain data that serializes as written.
export type Json = Record<string, unknown>;

/**
 * A list grown item by item, as something kept for long holds it: V8 leaves a list grown by
 * push room for 17 items, so each one-item list a route keeps (a decoded route's parentRefs,
 * hostnames, rules; an IR host's entries) would hold 128 bytes it never uses; the copy is
 * exactly as long as the list, and an empty one is the shared NO_ITEMS.
 */
export function exact<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? NO_ITEMS : list.slice();
}

/**
 * The empty list, shared: most lists kept per route are empty (a decoded rule's filters and
 * gRPC matches, a match's headers, an object's errors), and each empty list of its own is 32
 * bytes, ~2.7 MiB on the compiler thread at 10,000 routes. Frozen, so that nothing adds to it.
 */
export const NO_ITEMS: readonly never[] = Object.freeze([]);

/** `list.map(f)`, the empty list shared (NO_ITEMS). */
export function mapped<T, U>(list: readonly T[], f: (item: T) => U): readonly U[] {
  return list.length === 0 ? NO_ITEMS : list.map(f);
}

/** Two lists hold the same items (the same objects, or equal primitives) in the same order. */
export function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * How far two lists are the same (the same objects) from the front, and then from the back
 * without reaching into that front part of either: what lies between changed.
 */
export function sameEnds(
  before: readonly unknown[],
  after: readonly unknown[],
): { start: number; end: number } {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && before[start] === after[start]) start++;
  let end = 0;
  while (end < shorter - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { start, end };
}

/** The changed part of a list: items [from, to) of the last one stand where [from, newTo) of the next do. */
export interface ChangedPart {
  readonly from: number;
  readonly to: number;
  readonly newTo: number;
}

/** Where two lists differ: between the same objects at their start and at their end (sameEnds). */
export function changedPart(last: readonly unknown[], next: readonly unknown[]): ChangedPart {
  const { start, end } = sameEnds(last, next);
  return { from: start, to: last.length - end, newTo: next.length - end };
}

/**
 * Running counts (how many of something the items before each position gave: one more than
 * the items) for the next list: the last one's up to `from` and from `to` on, moved by the
 * change, with `middle` (the counts after each item between, in order) between.
 */
export function countsAround(
  counts: Int32Array,
  at: ChangedPart,
  middle: readonly number[],
  length: number,
): Int32Array {
  const out = new Int32Array(length + 1);
  out.set(counts.subarray(0, at.from + 1));
  for (let k = 0; k < middle.length; k++) out[at.from + 1 + k] = middle[k] as number;
  const shift = (middle[middle.length - 1] ?? out[at.from] ?? 0) - (counts[at.to] ?? 0);
  for (let i = at.to + 1, j = at.newTo + 1; i < counts.length; i++, j++)
    out[j] = (counts[i] as number) + shift;
  return out;
}

/**
 * Two JSON values are the same: equal primitives, or lists and objects whose items and own
 * keys are the same. Key order is not compared: objects made by the same code for the same
 * content list their keys in the same order. Allocates nothing (it runs over every status of
 * every reload).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const list = Array.isArray(a);
  if (list !== Array.isArray(b)) return false;
  if (list) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
    keys++;
  }
  for (const k in y) if (Object.hasOwn(y, k)) keys--;
  return keys === 0;
}

/**
 * Parts joined by `/` into one flat string, for an id or key kept as long as its object. A
 * template literal (or `+`) makes V8 keep a tree of its pieces, ~32 bytes per piece joined: the
 * rule, match and route ids and the validation keys held 1.5 MiB of them on the compiler thread
 * at 10,000 routes. Only where pieces are made for the id (a number, a prefix): a tree over
 * strings held anyway (the memo's `name\0hostname` host keys) is smaller than a flat copy.
 */
export function flatId(...parts: readonly (string | number)[]): string {
  return parts.join('/');
}

/**
 * The same object, built again key by key so that V8 gives it the hidden class (map) objects
 * of its shape share. An object literal that starts with a spread and goes on (`{ ...a, b }`)
 * gets a map and descriptor array of its own in Node 20's V8 (~150 bytes, and slow to make):
 * at 10,000 routes the objects kept per route held ~20 MB of them. Only for objects whose keys
 * the code names (Object.assign would set a `__proto__` key rather than copy it).
 */
export function sharedShape<T extends object>(o: T): T {
  return Object.assign({}, o);
}
