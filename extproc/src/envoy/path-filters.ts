// RequestRedirect and URLRewrite as Envoy route configuration: a `redirect` action, or
// `host_rewrite_literal` and `regex_rewrite` on the route action. Prefix replacement is a
// regular expression anchored on the match's whole path elements, so the Gateway API's
// trailing-slash table holds exactly (Envoy's `prefix_rewrite` would turn "/foo/" with
// replacement "/xyz/" into "/xyz//"). Envoy's regex_rewrite sees the path without its
// query string and keeps the query.
import type { TableMatch } from '../policy/policy-table.js';
import type { TablePathModifier, TableRedirect, TableRewrite } from '../policy/route-filters.js';
import type { Json } from '../json.js';

/** The listener a route configuration serves: what a redirect without scheme or port keeps. */
export interface ListenerContext {
  /** The Gateway listener's port (as the Gateway says, not where a test binds it). */
  readonly port: number;
  readonly https: boolean;
}

const RESPONSE_CODES: Readonly<Record<TableRedirect['statusCode'], string>> = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

/** A literal inside an RE2 expression. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A literal for an RE2 rewrite substitution, where a backslash starts a group reference. */
function escapeSubstitution(s: string): string {
  return s.replace(/\\/g, '\\\\');
}

/**
 * The `regex_rewrite` of a path modifier on a route of `match`. The prefix table of the
 * spec: with P the match's prefix and R the replacement, both without a trailing slash,
 * the path P becomes R (or "/" when R is empty) and P/rest becomes R/rest.
 */
export function pathRewrite(path: TablePathModifier, match: TableMatch): Json | undefined {
  if (path.type === 'ReplaceFullPath') {
    return { pattern: { regex: '^.*$' }, substitution: escapeSubstitution(path.value) };
  }
  // The CEL rule makes a prefix replacement's one match a PathPrefix.
  if (match.path.type !== 'PathPrefix') return undefined;
  // "/foo/" matches as "/foo" does; "/" leaves no prefix to take away.
  const prefix = escapeRegex(match.path.value.replace(/\/+$/, ''));
  const replacement = escapeSubstitution(path.value.replace(/\/+$/, ''));
  if (replacement === '') return { pattern: { regex: `^${prefix}/?(.*)$` }, substitution: '/\\1' };
  return { pattern: { regex: `^${prefix}((?:/.*)?)$` }, substitution: `${replacement}\\1` };
}

/** The scheme and port a redirect names, and whether the port is the scheme's own (80, 443). */
function redirectTarget(
  r: TableRedirect,
  listener: ListenerContext,
): { scheme: string; port: number; defaultPort: boolean } {
  const scheme = r.scheme ?? (listener.https ? 'https' : 'http');
  const port = r.port ?? (r.scheme !== undefined ? (r.scheme === 'https' ? 443 : 80) : listener.port);
  const defaultPort = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  return { scheme, port, defaultPort };
}

/**
 * Envoy's RedirectAction for a rule's RequestRedirect. The port rules of the spec: no port
 * given, the scheme's well-known port when a scheme is given, else the listener's; and no
 * port in Location for http on 80 or https on 443. Without `port_redirect` Envoy keeps the
 * port of the request's Host, so `hostPortInRequest` names the port even when it is the
 * scheme's own (for requests whose Host carries a port: see redirectRoutes).
 */
export function redirectAction(
  r: TableRedirect,
  match: TableMatch,
  listener: ListenerContext,
  hostPortInRequest = false,
): Json {
  const { scheme, port, defaultPort } = redirectTarget(r, listener);
  const out: Json = {
    scheme_redirect: scheme,
    ...(r.hostname !== undefined ? { host_redirect: r.hostname } : {}),
    ...(defaultPort && !hostPortInRequest ? {} : { port_redirect: port }),
    response_code: RESPONSE_CODES[r.statusCode],
  };
  if (r.path?.type === 'ReplaceFullPath') out['path_redirect'] = r.path.value;
  else if (r.path) {
    const rewrite = pathRewrite(r.path, match);
    if (rewrite) out['regex_rewrite'] = rewrite;
  }
  return out;
}

/** A Host (`:authority`) that ends in a port. */
const HOST_WITH_PORT: Json = { name: ':authority', string_match: { safe_regex: { regex: '.*:[0-9]+' } } };

/**
 * The redirect actions of a rule, each with the headers its route adds to the match. Envoy
 * passes the client's Host on untouched (the backend sees it as sent) and builds Location
 * from it: a port there stays unless `port_redirect` replaces it. Where the target port is
 * the scheme's own and the rule names no hostname, requests whose Host carries a port get
 * a route of their own that names the port (`:443`, which upstream's tests accept), the
 * others a Location without one.
 */
export function redirectRoutes(
  r: TableRedirect,
  match: TableMatch,
  listener: ListenerContext,
): { readonly headers: readonly Json[]; readonly redirect: Json }[] {
  const plain = { headers: [], redirect: redirectAction(r, match, listener) };
  if (r.hostname !== undefined || !redirectTarget(r, listener).defaultPort) return [plain];
  return [{ headers: [HOST_WITH_PORT], redirect: redirectAction(r, match, listener, true) }, plain];
}

/** The route action fields of a rule's URLRewrite. */
export function rewriteFields(r: TableRewrite, match: TableMatch): Json {
  const regex = r.path ? pathRewrite(r.path, match) : undefined;
  return {
    ...(r.hostname !== undefined ? { host_rewrite_literal: r.hostname } : {}),
    ...(regex ? { regex_rewrite: regex } : {}),
  };
}
