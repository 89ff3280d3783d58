// PolicyTable → a compiled resolver. Imports only the table: hostnames go into maps
// (exact, then wildcard suffixes from the longest), each hostname's matches into a
// HostBucket indexed by path, so a lookup costs a few map reads, not a scan of routes.
import type { PolicyTable } from '../table/policy-table.js';
import { compileEntry } from './entry.js';
import { headersReadBy } from '../table/headers-read.js';
import { HostBucket } from './host-bucket.js';
import { type ResolveRequest, type ResolveResult, hostOf } from './request.js';

export interface Resolver {
  resolve(request: ResolveRequest): ResolveResult | undefined;
  /** Number of (hostname, match) entries compiled. */
  readonly size: number;
  /** The request headers any match reads, lower-case (besides `:authority`, `:path`, `:method`). */
  readonly headersRead: ReadonlySet<string>;
}

export function compileResolver(table: PolicyTable): Resolver {
  const exact = new Map<string, HostBucket>();
  /** Keyed by the suffix after `*`, e.g. `.example.com`. */
  const wildcard = new Map<string, HostBucket>();
  const any = new HostBucket('*');
  let size = 0;
  const headersRead: ReadonlySet<string> = new Set(headersReadBy(table));
  const bucketFor = (hostname: string): HostBucket => {
    if (hostname === '*') return any;
    const map = hostname.startsWith('*.') ? wildcard : exact;
    const key = hostname.startsWith('*.') ? hostname.slice(1) : hostname;
    let b = map.get(key);
    if (!b) {
      b = new HostBucket(hostname);
      map.set(key, b);
    }
    return b;
  };
  table.routes.forEach((route, order) => {
    for (const rule of route.rules) {
      for (const match of rule.matches) {
        const entry = compileEntry(route, rule, match, order);
        for (const h of route.hostnames) {
          bucketFor(h).add(entry);
          size++;
        }
      }
    }
  });
  for (const b of exact.values()) b.seal();
  for (const b of wildcard.values()) b.seal();
  any.seal();
  const wildcardSuffixes = wildcard.size > 0;

  return {
    size,
    headersRead,
    resolve(req) {
      const host = hostOf(req.authority);
      const q = req.path.indexOf('?');
      const path = q === -1 ? req.path : req.path.slice(0, q);
      const query = q === -1 ? '' : req.path.slice(q + 1);
      const { method, headers } = req;
      // Hostname precedence: the exact hostname, then wildcards from the longest suffix, then any host.
      let b = exact.get(host);
      let e = b?.lookup(path, method, headers, query);
      if (b && e) return b.result(e);
      if (wildcardSuffixes) {
        for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
          b = wildcard.get(host.slice(dot));
          e = b?.lookup(path, method, headers, query);
          if (b && e) return b.result(e);
        }
      }
      e = any.lookup(path, method, headers, query);
      return e ? any.result(e) : undefined;
    },
  };
}
