// One Gateway API match as an Envoy RouteMatch. Gateway API regular expressions match the
// whole value, as Envoy's RE2 `safe_regex` does; PathPrefix matches whole path elements,
// as `path_separated_prefix` does ("/foo" matches "/foo" and "/foo/bar", not "/foobar").
import type { StringMatch, TableMatch } from '../policy/policy-table.js';
import { prefixKey } from '../ir/precedence.js';
import { type Json, sharedShape } from '../json.js';

function stringMatcher(type: StringMatch['type'], value: string): Json {
  return type === 'Exact' ? { exact: value } : { safe_regex: { regex: value } };
}

function pathMatch(path: TableMatch['path']): Json {
  switch (path.type) {
    case 'Exact':
      return { path: path.value };
    case 'RegularExpression':
      return { safe_regex: { regex: path.value } };
    case 'PathPrefix': {
      const key = prefixKey(path.value);
      return key === '/' ? { prefix: '/' } : { path_separated_prefix: key };
    }
  }
}

export function routeMatch(match: TableMatch): Json {
  const headers: Json[] = [];
  if (match.method !== undefined) {
    headers.push({ name: ':method', string_match: { exact: match.method } });
  }
  for (const h of match.headers) {
    headers.push({ name: h.name.toLowerCase(), string_match: stringMatcher(h.type, h.value) });
  }
  const query = match.queryParams.map((q) => ({
    name: q.name,
    string_match: stringMatcher(q.type, q.value),
  }));
  return {
    ...pathMatch(match.path),
    ...(headers.length > 0 ? { headers } : {}),
    ...(query.length > 0 ? { query_parameters: query } : {}),
  };
}

/**
 * An Envoy RouteMatch with more header conditions, before its own (`first`: a cheap check
 * that rules most requests out) or after them.
 */
export function withMatchHeaders(match: Json, extra: readonly Json[], at: 'first' | 'last' = 'first'): Json {
  const headers = (match['headers'] as Json[] | undefined) ?? [];
  return sharedShape({ ...match, headers: at === 'first' ? [...extra, ...headers] : [...headers, ...extra] });
}
