// Which request headers the resolver reads for a table: the names of every header match,
// of every rule (a rule that fails closed still takes its requests from rules below it).
// ext_proc decodes only these, and attach mode's Envoy forwards only these. Each name is counted
// over the routes' matches and the counts kept from one build to the next, so that a change looks
// at the routes between the same start and end of the two route lists alone (json.ts sameEnds),
// not every match of 10,000 routes; a fresh memo counts them all.
import { sameEnds } from '../json.js';
import type { TableRoute } from './policy-table.js';

/** The pseudo-headers (and `host`, HTTP/1's authority) every lookup reads. */
export const REQUEST_LINE_HEADERS: readonly string[] = [':authority', ':method', ':path', 'host'];

/** Adds (`by` 1) or takes away (-1) the header names a route's matches read. */
function count(counts: Map<string, number>, route: TableRoute, by: 1 | -1): void {
  for (const rule of route.rules) {
    for (const match of rule.matches) {
      for (const h of match.headers) {
        const name = h.name.toLowerCase();
        const n = (counts.get(name) ?? 0) + by;
        if (n === 0) counts.delete(name);
        else counts.set(name, n);
      }
    }
  }
}

export class HeadersReadMemo {
  private last: { readonly routes: readonly TableRoute[]; readonly names: readonly string[] } | undefined;
  /** How many matches of the last routes read each name. */
  private readonly counts = new Map<string, number>();

  /** Lower-case header names the routes' matches read, sorted, without the request line. */
  read(routes: readonly TableRoute[]): readonly string[] {
    const last = this.last;
    if (last?.routes === routes) return last.names;
    const { start, end } = last ? sameEnds(last.routes, routes) : { start: 0, end: 0 };
    if (last)
      for (let i = start; i < last.routes.length - end; i++)
        count(this.counts, last.routes[i] as TableRoute, -1);
    for (let i = start; i < routes.length - end; i++) count(this.counts, routes[i] as TableRoute, 1);
    const names = [...this.counts.keys()].sort();
    this.last = { routes, names };
    return names;
  }
}
