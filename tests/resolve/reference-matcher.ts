// The Gateway API's matching rules written out plainly, for the property tests that check an
// ordered list of matches (virtualHosts(), the generated Envoy routes) against the resolver:
// random requests, the host an Envoy would pick for one, and whether one match accepts it.
import type { ResolveRequest } from '../../extproc/src/resolve/request.js';
import type { TableMatch } from '../../extproc/src/policy/policy-table.js';
import { pick } from './random-table.js';

/** A request to one of a few hosts, on a path made of `segments` (and a few near misses). */
export function randomRequest(rand: () => number, segments: readonly string[]): ResolveRequest {
  const host = pick(rand, [
    'a.example.com',
    'b.example.com',
    'c.example.com',
    'd.x.example.com',
    'example.com',
    'other.org',
  ]);
  const seg = pick(rand, [...segments, 'a/b/c/d', 'ab', 'a7']);
  const query = rand() < 0.3 ? '?q=1' : '';
  return {
    method: pick(rand, ['GET', 'POST']),
    authority: host,
    path: `/${seg}${rand() < 0.2 ? '/' : ''}${query}`,
    headers: rand() < 0.5 ? { 'x-v': pick(rand, ['1', '2']) } : {},
  };
}

/** Whether one match accepts the request. */
export function matches(m: TableMatch, req: ResolveRequest): boolean {
  const [path = '', query = ''] = req.path.split('?');
  const { type, value } = m.path;
  if (type === 'Exact' && path !== value) return false;
  if (type === 'PathPrefix') {
    const key = value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
    if (!(key === '/' || path === key || path.startsWith(`${key}/`))) return false;
  }
  if (type === 'RegularExpression' && !new RegExp(`^(?:${value})$`).test(path)) return false;
  if (m.method !== undefined && m.method !== req.method) return false;
  for (const h of m.headers) if (req.headers?.[h.name.toLowerCase()] !== h.value) return false;
  const params = new URLSearchParams(query);
  for (const q of m.queryParams) if (params.get(q.name) !== q.value) return false;
  return true;
}

/** The virtual host Envoy picks for an authority: exact name, longest covering wildcard, then `*`. */
export function chooseHost<H extends { readonly hostname: string }>(
  hosts: readonly H[],
  authority: string,
): H | undefined {
  const exact = hosts.find((h) => h.hostname === authority);
  if (exact) return exact;
  const wild = hosts
    .filter((h) => h.hostname.startsWith('*.') && authority.endsWith(h.hostname.slice(1)))
    .sort((a, b) => b.hostname.length - a.hostname.length)[0];
  return wild ?? hosts.find((h) => h.hostname === '*');
}
