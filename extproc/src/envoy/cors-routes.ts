// CORS (GEP-1767) as routes, so that no request of a rule without CORS does any work for
// it (Envoy's CORS filter would sit in every request's chain). A rule with CORS gets, in
// front of its own routes and matching what they match:
//   1. a preflight from an allowed origin → 204 with the CORS headers, answered by Envoy;
//   2. a preflight from any other origin → 403 without them;
//   3. its own routes again, narrowed to allowed origins, adding the CORS headers to the
//      backend's answer;
// and its own routes add `Vary: Origin`, as their answers differ by origin. A preflight is an
// OPTIONS request with Origin and Access-Control-Request-Method (the Fetch standard).
import type { TableMatch } from '../policy/policy-table.js';
import type { TableCors } from '../policy/route-filters.js';
import { escapeRegex } from './path-filters.js';
import { routeMatch, withMatchHeaders } from './route-match.js';
import type { Json } from '../json.js';

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };

/**
 * One allowed origin as RE2. The host's `*` takes any number of labels on its left; a port
 * left out is the scheme's default, so `https://a.com` and `https://a.com:443` are one origin.
 */
function originPattern(origin: string): string {
  const m = /^(https?):\/\/(.+?)(?::([0-9]+))?$/.exec(origin);
  if (!m) return escapeRegex(origin);
  const scheme = m[1] as string;
  const host = m[2] as string;
  // The pattern allows "0443": the same port as 443, which the Origin header writes plainly.
  const port = m[3] !== undefined ? String(Number(m[3])) : DEFAULT_PORTS[scheme];
  const hostRe =
    host === '*'
      ? '(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)'
      : host.startsWith('*.')
        ? `[A-Za-z0-9.-]+${escapeRegex(host.slice(1))}`
        : escapeRegex(host);
  const portRe = port === DEFAULT_PORTS[scheme] ? `(:${port})?` : `:${port}`;
  return `${scheme}://${hostRe}${portRe}`;
}

/** The Origin header matcher of the allowed origins; undefined when none is allowed. */
function allowedOriginMatcher(cors: TableCors): Json | undefined {
  if (cors.allowOrigins.length === 0) return undefined;
  if (cors.allowOrigins.includes('*')) return { name: 'origin', present_match: true };
  // Scheme and host compare without regard to case (RFC 6454 serialises them in lower case).
  const regex = `(?i)(${cors.allowOrigins.map(originPattern).join('|')})`;
  return { name: 'origin', string_match: { safe_regex: { regex } } };
}

function set(key: string, value: string): Json {
  return { header: { key, value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' };
}

const VARY_ORIGIN: Json = {
  header: { key: 'vary', value: 'Origin' },
  append_action: 'APPEND_IF_EXISTS_OR_ADD',
};

/**
 * The headers every answer to an allowed origin carries. The origin is echoed, never `*`,
 * which is what credentials require and what the specification allows without them. An
 * exposeHeaders of `*` means every header only without credentials; with them there is no
 * way to say it, and only the headers named beside it are sent.
 */
function allowedHeaders(cors: TableCors): Json[] {
  const expose = cors.allowCredentials ? cors.exposeHeaders.filter((h) => h !== '*') : cors.exposeHeaders;
  return [
    set('access-control-allow-origin', '%REQ(origin)%'),
    ...(cors.allowCredentials ? [set('access-control-allow-credentials', 'true')] : []),
    ...(expose.length > 0 ? [set('access-control-expose-headers', expose.join(', '))] : []),
  ];
}

/**
 * The preflight's answer headers. A wildcard method or header list echoes what the preflight
 * asks for (required with credentials, allowed without); an echo of a header the request
 * does not carry is left out, as Envoy adds no header whose value comes out empty.
 */
function preflightHeaders(cors: TableCors): Json[] {
  const methods = cors.allowMethods.includes('*')
    ? '%REQ(access-control-request-method)%'
    : cors.allowMethods.join(', ');
  const headers = cors.allowHeaders.includes('*')
    ? '%REQ(access-control-request-headers)%'
    : cors.allowHeaders.join(', ');
  return [
    ...allowedHeaders(cors),
    ...(methods !== '' ? [set('access-control-allow-methods', methods)] : []),
    ...(headers !== '' ? [set('access-control-allow-headers', headers)] : []),
    set('access-control-max-age', String(cors.maxAge)),
    VARY_ORIGIN,
  ];
}

/**
 * The match of the rule's preflights: its own as written, with the method it names (if any)
 * moved to Access-Control-Request-Method, where a preflight carries the method it asks about.
 */
function preflightMatch(tableMatch: TableMatch): Json {
  const match = routeMatch(tableMatch);
  const headers = ((match['headers'] as Json[] | undefined) ?? []).filter((h) => h['name'] !== ':method');
  return {
    ...match,
    headers: [
      { name: ':method', string_match: { exact: 'OPTIONS' } },
      tableMatch.method !== undefined
        ? { name: 'access-control-request-method', string_match: { exact: tableMatch.method } }
        : { name: 'access-control-request-method', present_match: true },
      ...headers,
    ],
  };
}

/**
 * The routes of a rule with CORS for one of its matches, from the routes it would have
 * without (`routes`, in order); each preflight's answer also carries `answered` (route-action.ts:
 * what a route Envoy answers itself says to its route configuration's filters).
 */
export function corsRoutes(
  cors: TableCors,
  tableMatch: TableMatch,
  routes: readonly Json[],
  answered: Json = {},
): Json[] {
  const first = routes[0];
  if (first === undefined) return [];
  const origin = allowedOriginMatcher(cors);
  const preflight = preflightMatch(tableMatch);
  const name = tableMatch.id;
  const preflightAnswer = (suffix: string, match: Json, status: number, headers: Json[]): Json => ({
    name: `${name}/${suffix}`,
    match,
    direct_response: { status },
    ...answered,
    ...(headers.length > 0 ? { response_headers_to_add: headers } : {}),
  });
  const out: Json[] = [];
  if (origin)
    out.push(
      preflightAnswer(
        'cors-preflight',
        withMatchHeaders(preflight, [origin], 'last'),
        204,
        preflightHeaders(cors),
      ),
    );
  if (!cors.allowOrigins.includes('*')) {
    out.push(
      preflightAnswer(
        'cors-preflight-denied',
        withMatchHeaders(preflight, [{ name: 'origin', present_match: true }], 'last'),
        403,
        [VARY_ORIGIN],
      ),
    );
  }
  const vary = (r: Json, extra: readonly Json[]): Json[] => [
    ...((r['response_headers_to_add'] as Json[] | undefined) ?? []),
    ...extra,
    VARY_ORIGIN,
  ];
  if (origin) {
    for (const r of routes) {
      out.push({
        ...r,
        name: `${r['name'] as string}/cors`,
        match: withMatchHeaders(r['match'] as Json, [origin], 'last'),
        response_headers_to_add: vary(r, allowedHeaders(cors)),
      });
    }
  }
  for (const r of routes) out.push({ ...r, response_headers_to_add: vary(r, []) });
  return out;
}
