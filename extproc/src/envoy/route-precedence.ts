// Gateway API route precedence as an order of Envoy routes. Envoy takes the first route
// that matches, so the matches of one hostname are sorted the way the resolver ranks
// them (resolve/host-bucket.ts): exact path, then regular expressions, then the longest
// prefix; within a path, a method match, then the most header matches, then the most
// query-param matches, then the older route, then rule and match order.
import type { TableMatch, TableRoute, TableRule } from '../table/policy-table.js';

export interface RouteEntry {
  readonly route: TableRoute;
  readonly rule: TableRule;
  readonly match: TableMatch;
  /** The route's position in the table (oldest first, then namespace/name). */
  readonly routeOrder: number;
  readonly matchIndex: number;
}

const RANK_EXACT = 3e9;
const RANK_REGEX = 2e9;
const RANK_PREFIX = 1e9;

/** `/abc/` and `/abc` are the same prefix; `/` stays `/`. */
export function prefixKey(value: string): string {
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}

function pathRank(m: TableMatch): number {
  if (m.path.type === 'Exact') return RANK_EXACT;
  if (m.path.type === 'PathPrefix') return RANK_PREFIX + prefixKey(m.path.value).length * 2;
  // "Characters in the service" first: a gRPC method-only match ranks just above `/`.
  if (m.grpc && m.grpc.type === 'Exact' && m.grpc.service === undefined) return RANK_PREFIX + 3;
  return RANK_REGEX;
}

function methodMatch(m: TableMatch): number {
  return m.method !== undefined && m.grpc === undefined ? 1 : 0;
}

export function comparePrecedence(a: RouteEntry, b: RouteEntry): number {
  return (
    pathRank(b.match) - pathRank(a.match) ||
    methodMatch(b.match) - methodMatch(a.match) ||
    b.match.headers.length - a.match.headers.length ||
    b.match.queryParams.length - a.match.queryParams.length ||
    a.routeOrder - b.routeOrder ||
    a.rule.index - b.rule.index ||
    a.matchIndex - b.matchIndex
  );
}

export function matchIndexOf(match: TableMatch): number {
  return Number(match.id.slice(match.id.lastIndexOf('/') + 1));
}
