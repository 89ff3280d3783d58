// Ties between objects: "the oldest based on creation timestamp", then "first in
// alphabetical order by {namespace}/{name}" (HTTPRoute and policy precedence rules).

export interface Aged {
  readonly namespace: string;
  readonly name: string;
  readonly creationTimestamp?: string;
}

function time(o: Aged): number {
  const t = o.creationTimestamp === undefined ? NaN : Date.parse(o.creationTimestamp);
  // Objects without a timestamp (file mode) tie with each other and come after dated ones.
  return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t;
}

export function olderFirst(a: Aged, b: Aged): number {
  const d = time(a) - time(b);
  if (d !== 0) return d;
  const an = `${a.namespace}/${a.name}`;
  const bn = `${b.namespace}/${b.name}`;
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/**
 * The objects oldest first, as olderFirst orders them, each one's timestamp parsed and its
 * `namespace/name` written once: sorting 10,000 routes with olderFirst itself wrote that
 * string some 280,000 times.
 */
export function sortedOlderFirst<T extends Aged>(items: readonly T[]): T[] {
  const keyed = items.map((item) => ({ item, time: time(item), name: `${item.namespace}/${item.name}` }));
  keyed.sort((a, b) => a.time - b.time || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return keyed.map((k) => k.item);
}
