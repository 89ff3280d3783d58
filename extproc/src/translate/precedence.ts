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
