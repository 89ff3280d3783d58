// One (route, rule, match) compiled for lookup: its precedence and a test for the parts of
// the match the index cannot decide (method, headers, query params, regular expressions).
import type { TableMatch, TableRoute, TableRule } from '../table/policy-table.js';

export interface Entry {
  readonly route: TableRoute;
  readonly rule: TableRule;
  readonly match: TableMatch;
  /** Route order in the table (oldest first, then namespace/name). */
  readonly routeOrder: number;
  readonly matchIndex: number;
  readonly test: (
    method: string,
    headers: Readonly<Record<string, string>> | undefined,
    query: string,
  ) => boolean;
  /** Regular-expression path test; undefined for exact and prefix paths. */
  readonly pathTest?: (path: string) => boolean;
}

type Check = (
  method: string,
  headers: Readonly<Record<string, string>> | undefined,
  query: string,
) => boolean;

/** A regular expression, or one that never matches when the table holds an invalid one. */
function regex(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch {
    return /(?!)/;
  }
}

function valueTest(type: 'Exact' | 'RegularExpression', value: string): (v: string) => boolean {
  if (type === 'Exact') return (v) => v === value;
  // Gateway API regular expressions match the whole value.
  const re = regex(`^(?:${value})$`);
  return (v) => re.test(v);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The first value of a query parameter ("only the first entry with an equivalent name MUST be considered"). */
export function queryParam(query: string, name: string): string | undefined {
  if (query === '') return undefined;
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const k = decode(eq === -1 ? part : part.slice(0, eq));
    if (k === name) return decode(eq === -1 ? '' : part.slice(eq + 1));
  }
  return undefined;
}

export function compileEntry(
  route: TableRoute,
  rule: TableRule,
  match: TableMatch,
  routeOrder: number,
): Entry {
  const checks: Check[] = [];
  if (match.method !== undefined) {
    const m = match.method;
    checks.push((method) => method === m);
  }
  for (const h of match.headers) {
    const name = h.name.toLowerCase();
    const t = valueTest(h.type, h.value);
    checks.push((_m, headers) => {
      const v = headers?.[name];
      return v !== undefined && t(v);
    });
  }
  for (const q of match.queryParams) {
    const t = valueTest(q.type, q.value);
    checks.push((_m, _h, query) => {
      const v = queryParam(query, q.name);
      return v !== undefined && t(v);
    });
  }
  const test: Entry['test'] =
    checks.length === 0
      ? () => true
      : checks.length === 1
        ? (checks[0] as Check)
        : (method, headers, query) => checks.every((c) => c(method, headers, query));
  let pathTest: Entry['pathTest'];
  if (match.path.type === 'RegularExpression') {
    const re = regex(match.path.value.startsWith('^') ? match.path.value : `^(?:${match.path.value})$`);
    pathTest = (p) => re.test(p);
  }
  const matchIndex = Number(match.id.slice(match.id.lastIndexOf('/') + 1));
  return { route, rule, match, routeOrder, matchIndex, test, ...(pathTest ? { pathTest } : {}) };
}

/**
 * Precedence among entries of the same path group: method match, most header matches,
 * most query-param matches, then the older route (table order), then rule and match order.
 */
export function compareEntries(a: Entry, b: Entry): number {
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
