// `/v1/resolve?method=&host=&path=&header=name:value…` → the request to resolve, with the
// same rules as `steadfast resolve`: host and an absolute path required, method GET by
// default, header names lower-cased, repeated headers joined with `,`.
import type { ResolveRequest } from '../../resolve/request.js';
import { AdminError } from './admin-errors.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Bounds on what one query may ask about (client input is bounded everywhere). */
const MAX_HEADERS = 64;

function single(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) {
    if (v.length > 1) throw new AdminError(400, 'bad-request', `${name} given more than once`);
    return v[0];
  }
  return v;
}

/** `port=N`: the Gateway listener port to resolve on; absent: the first whose routes match. */
export function parseResolvePort(query: Query): number | undefined {
  const text = single(query, 'port');
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) {
    throw new AdminError(400, 'bad-request', `port=${text}: expected a port number 1-65535`);
  }
  return port;
}

export function parseResolveQuery(query: Query): ResolveRequest {
  const host = single(query, 'host');
  const path = single(query, 'path');
  if (host === undefined || host === '') throw new AdminError(400, 'bad-request', 'host is required');
  if (path === undefined || !path.startsWith('/')) {
    throw new AdminError(400, 'bad-request', 'path is required and must start with /');
  }
  const method = (single(query, 'method') ?? 'GET').toUpperCase();
  const raw = query['header'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.length > MAX_HEADERS) {
    throw new AdminError(400, 'bad-request', `at most ${MAX_HEADERS} header parameters`);
  }
  const headers = Object.create(null) as Record<string, string>;
  for (const h of list) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new AdminError(400, 'bad-request', `header=${h}: expected name:value`);
    const name = h.slice(0, colon).trim().toLowerCase();
    const value = h.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  return { method, authority: host, path, headers };
}
