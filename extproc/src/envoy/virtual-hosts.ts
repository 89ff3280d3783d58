// Virtual hosts of one listener from the routes' effective hostnames. Envoy picks the
// most specific domain (exact, then the longest wildcard suffix, then `*`) and never falls
// back to another virtual host; the resolver does fall back when a hostname's own routes
// do not match. So each virtual host lists its own routes, then those of every less
// specific hostname that covers it, each group in Gateway API precedence order.
import type { TableRoute } from '../table/policy-table.js';
import { type RouteEntry, comparePrecedence, matchIndexOf } from './route-precedence.js';

export interface HostRoutes {
  /** `foo.example.com`, `*.example.com` or `*`. */
  readonly hostname: string;
  readonly entries: readonly RouteEntry[];
}

function covers(wildcard: string, hostname: string): boolean {
  if (wildcard === '*') return true;
  // `*.example.com` covers `a.example.com`, `a.b.example.com` and `*.a.example.com`.
  const suffix = wildcard.slice(1);
  return hostname !== wildcard && hostname.endsWith(suffix) && hostname.length > suffix.length;
}

function specificity(hostname: string): number {
  if (hostname === '*') return 0;
  return hostname.startsWith('*.') ? hostname.length : Number.MAX_SAFE_INTEGER;
}

/** Exact hostnames first (alphabetical), then wildcards from the longest, then `*`. */
export function compareHostnames(a: string, b: string): number {
  return specificity(b) - specificity(a) || (a < b ? -1 : a > b ? 1 : 0);
}

export function hostRoutes(routes: readonly { route: TableRoute; order: number }[]): HostRoutes[] {
  const own = new Map<string, RouteEntry[]>();
  for (const { route, order } of routes) {
    for (const hostname of route.hostnames) {
      let list = own.get(hostname);
      if (!list) own.set(hostname, (list = []));
      for (const rule of route.rules) {
        for (const match of rule.matches) {
          list.push({ route, rule, match, routeOrder: order, matchIndex: matchIndexOf(match) });
        }
      }
    }
  }
  for (const list of own.values()) list.sort(comparePrecedence);
  const hostnames = [...own.keys()].sort(compareHostnames);
  return hostnames.map((hostname) => {
    const fallbacks = hostnames.filter((h) => h !== hostname && h.startsWith('*') && covers(h, hostname));
    fallbacks.sort(compareHostnames);
    return {
      hostname,
      entries: [hostname, ...fallbacks].flatMap((h) => own.get(h) ?? []),
    };
  });
}
