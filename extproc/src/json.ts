// A JSON object as the Envoy generators build it: plain data that serializes as written.
export type Json = Record<string, unknown>;

/** Two lists hold the same items (the same objects, or equal primitives) in the same order. */
export function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
