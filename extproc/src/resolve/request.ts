// What the resolver needs from a request, and what it answers.
import type { TableMatch, TableRoute, TableRule } from '../table/policy-table.js';

export interface ResolveRequest {
  readonly method: string;
  /** The `:authority` / Host header; a port is ignored. */
  readonly authority: string;
  /** The request path; a `?query` suffix is read for query-param matches. */
  readonly path: string;
  /** Request headers by lower-case name (repeated headers joined with `,`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ResolveResult {
  /** `httproute/<ns>/<name>/rule/<i>` */
  readonly routeRuleId: string;
  /** The rule's policy token, for the filter. */
  readonly token: string;
  readonly route: TableRoute;
  readonly rule: TableRule;
  readonly match: TableMatch;
  /** The hostname entry that matched (`*` for any). */
  readonly hostname: string;
  /** Set when the rule fails closed: answer 500. */
  readonly invalid?: { readonly reason: string; readonly message: string };
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`; lower-cased. */
export function hostOf(authority: string): string {
  let host = authority;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end === -1 ? host : host.slice(0, end + 1);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host.toLowerCase();
}
