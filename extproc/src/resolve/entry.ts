// One (route, rule, match) compiled for lookup: its precedence and a test for the parts of
// the match the index cannot decide (method, headers, query params, regular expressions).
import { type RankedMatch, compareMatches, matchIndexOf } from '../ir/precedence.js';
import type { TableMatch, TableRoute, TableRule } from '../policy/policy-table.js';

export interface Entry extends RankedMatch {
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
function queryParam(query: string, name: string): string | undefined {
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
  const matchIndex = matchIndexOf(match);
  return { route, rule, match, routeOrder, matchIndex, test, ...(pathTest ? { pathTest } : {}) };
}

/** Gateway API precedence among entries of the same path rank (ir/precedence.ts). */
export const compareEntries: (a: Entry, b: Entry) => number = compareMatches;
