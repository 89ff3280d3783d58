// Which request headers the resolver reads for a table: the names of every header match,
// of every rule (a rule that fails closed still takes its requests from rules below it).
// ext_proc decodes only these, and attach mode's Envoy forwards only these.
import type { PolicyTable } from './policy-table.js';

/** The pseudo-headers (and `host`, HTTP/1's authority) every lookup reads. */
export const REQUEST_LINE_HEADERS: readonly string[] = [':authority', ':method', ':path', 'host'];

/** Lower-case header names the table's matches read, sorted, without the request line. */
export function headersReadBy(table: PolicyTable): string[] {
  const names = new Set<string>();
  for (const route of table.routes) {
    for (const rule of route.rules) {
      for (const match of rule.matches) for (const h of match.headers) names.add(h.name.toLowerCase());
    }
  }
  return [...names].sort();
}
