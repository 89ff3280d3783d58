// Gateway API route precedence, once, for both consumers: the Envoy generator orders each
// virtual host's routes by it (first match wins in Envoy), and the ext_proc resolver picks
// among the candidates of a lookup by it. Pure: reads only the table's matches.
import type { TableMatch, TableRoute, TableRule } from '../policy/policy-table.js';

/** Path precedence: Exact > RegularExpression > longest PathPrefix. */
const RANK_EXACT = 3e9;
const RANK_REGEX = 2e9;
const RANK_PREFIX = 1e9;

/** A prefix's rank grows with its length; a gRPC method-only match sits just above `/`. */
export function prefixRank(length: number): number {
  return RANK_PREFIX + length * 2;
}

function scanRank(m: TableMatch): number {
  // GRPCRoute precedence: characters in the service first, so a method-only match ranks
  // below every service match and above the catch-all.
  if (m.grpc && m.grpc.type === 'Exact' && m.grpc.service === undefined) return prefixRank(1) + 1;
  return RANK_REGEX;
}

/** `/abc/` and `/abc` are the same prefix; `/` stays `/`. */
export function prefixKey(value: string): string {
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}

/** A match's path precedence: higher ranks are tried first. */
export function pathRank(m: TableMatch): number {
  if (m.path.type === 'Exact') return RANK_EXACT;
  if (m.path.type === 'PathPrefix') return prefixRank(prefixKey(m.path.value).length);
  return scanRank(m);
}

/** One match where precedence sees it: its route's place in the table, its rule, its index. */
export interface RankedMatch {
  readonly route: TableRoute;
  readonly rule: TableRule;
  readonly match: TableMatch;
  /** Route order in the table (oldest first, then namespace/name). */
  readonly routeOrder: number;
  readonly matchIndex: number;
}

/** The index of a match within its rule, from its id (`<rule id>/match/<j>`). */
export function matchIndexOf(match: TableMatch): number {
  return Number(match.id.slice(match.id.lastIndexOf('/') + 1));
}

/**
 * Precedence among matches of the same path rank: method match, most header matches, most
 * query-param matches, then the older route (table order), then rule and match order.
 */
export function compareMatches(a: RankedMatch, b: RankedMatch): number {
  // gRPC requests are all POST: the method a GRPCRoute match carries is not a method match.
  const am = a.match.method !== undefined && a.route.kind === 'http' ? 1 : 0;
  const bm = b.match.method !== undefined && b.route.kind === 'http' ? 1 : 0;
  return (
    bm - am ||
    b.match.headers.length - a.match.headers.length ||
    b.match.queryParams.length - a.match.queryParams.length ||
    a.routeOrder - b.routeOrder ||
    a.rule.index - b.rule.index ||
    a.matchIndex - b.matchIndex
  );
}
