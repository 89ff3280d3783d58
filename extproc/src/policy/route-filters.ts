// The route filters whose meaning is plain data, in one spelling for the Gateway API model
// (gatewayapi/model.ts: decoded and checked) and the policy table (what a rule does): header
// modifiers, redirects, rewrites and CORS. A layer of its own below both.

/** Header modifications (RequestHeaderModifier, ResponseHeaderModifier, or a backendRef's own). */
export interface HeaderModifier {
  readonly set: readonly { readonly name: string; readonly value: string }[];
  readonly add: readonly { readonly name: string; readonly value: string }[];
  readonly remove: readonly string[];
}

/** How a redirect or a rewrite changes the path (HTTPPathModifier; ReplacePrefixMatch's value may be empty). */
export interface TablePathModifier {
  readonly type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  readonly value: string;
}

/** RequestRedirect (statusCode defaulted to 302): the rule answers with a redirect and has no backends. */
export interface TableRedirect {
  readonly scheme?: 'http' | 'https';
  readonly hostname?: string;
  readonly port?: number;
  readonly path?: TablePathModifier;
  readonly statusCode: 301 | 302 | 303 | 307 | 308;
}

/** URLRewrite: what the backend is sent instead of the request's Host and path. */
export interface TableRewrite {
  readonly hostname?: string;
  readonly path?: TablePathModifier;
}

/**
 * CORS (GEP-1767): the gateway answers preflights from allowed origins and adds the CORS
 * headers to the answers to their other requests. maxAge defaulted (5), allowCredentials false
 * when absent.
 */
export interface TableCors {
  /** `*`, or `<scheme>://<host>[:<port>]` where the host may start with `*.` or be `*`. */
  readonly allowOrigins: readonly string[];
  readonly allowMethods: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  readonly allowCredentials: boolean;
  /** Seconds. */
  readonly maxAge: number;
}
