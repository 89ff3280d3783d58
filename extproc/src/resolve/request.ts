// What the resolver needs from a request, and what it answers.
import type { TableMatch, TableRoute, TableRule } from '../policy/policy-table.js';

/**
 * What Envoy says about the listener a request arrived on (ext_proc `request_attributes`),
 * so the request is matched only against the routes of that Gateway port, as gateway mode's
 * one Envoy listener per port does.
 */
export interface RequestListener {
  /** The Gateway listener port the Envoy listener declares in its metadata (`steadfast.gateway_port`). */
  readonly gatewayPort?: number;
  /** That metadata when it is not a port number (cut to 64 characters): ignored, and reported. */
  readonly invalidGatewayPort?: string;
  /** The local port of the request's connection (Envoy's `destination.port`). */
  readonly destinationPort?: number;
}

/**
 * How the resolver told a request's Gateway port: from the listener's metadata, from the
 * connection's destination port, because the configuration has one port only, or not at
 * all (`unknown`: a request then gets a policy only where every port's routes agree).
 */
export type ListenerBy = 'metadata' | 'destination_port' | 'single_port' | 'unknown';

export interface ListenerChoice {
  /** The Gateway port whose routes apply; undefined for `unknown` and for a table without listeners. */
  readonly port: number | undefined;
  readonly by: ListenerBy;
}

export interface ResolveRequest {
  readonly method: string;
  /** The `:authority` / Host header; a port is ignored. */
  readonly authority: string;
  /** The request path; a `?query` suffix is read for query-param matches. */
  readonly path: string;
  /** Request headers by lower-case name (repeated headers joined with `,`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The listener the request arrived on; absent: told as if Envoy sent no attribute. */
  readonly listener?: RequestListener;
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
