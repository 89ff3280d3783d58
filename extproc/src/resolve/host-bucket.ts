// The matches of one hostname, indexed by path: exact paths and path prefixes in maps,
// regular expressions (and gRPC method-only matches) in a short ranked list.
import { pathRank, prefixKey, prefixRank } from '../ir/precedence.js';
import { type Entry, compareEntries } from './entry.js';
import type { ResolveResult } from './request.js';

type Ranked = { readonly rank: number; readonly entry: Entry };

/** The answer for an entry found through this bucket, built once so a lookup allocates nothing. */
function resultOf(e: Entry, hostname: string): ResolveResult {
  return Object.freeze({
    routeRuleId: e.rule.id,
    token: e.rule.token,
    route: e.route,
    rule: e.rule,
    match: e.match,
    hostname,
    ...(e.rule.invalid ? { invalid: e.rule.invalid } : {}),
  });
}

export class HostBucket {
  private readonly exact = new Map<string, Entry[]>();
  private readonly prefix = new Map<string, Entry[]>();
  private scans: Ranked[] = [];
  private readonly pending: Entry[] = [];
  private readonly results = new Map<Entry, ResolveResult>();
  /** Whether any match of this bucket reads a query parameter (set by seal). */
  readsQuery = false;
  /** The lower-case names of the request headers this bucket's matches read (set by seal). */
  readonly headersRead = new Set<string>();

  /** @param hostname the hostname this bucket serves, as reported in results (`*` for any). */
  constructor(private readonly hostname: string) {}

  /** The result for an entry of this bucket. */
  result(e: Entry): ResolveResult {
    let r = this.results.get(e);
    if (!r) {
      r = resultOf(e, this.hostname);
      this.results.set(e, r);
    }
    return r;
  }

  add(entry: Entry): void {
    this.pending.push(entry);
  }

  /** Sorts every group once; call after the last add. */
  seal(): void {
    for (const e of this.pending) {
      this.result(e);
      if (e.match.queryParams.length > 0) this.readsQuery = true;
      for (const h of e.match.headers) this.headersRead.add(h.name.toLowerCase());
      const { type, value } = e.match.path;
      if (type === 'Exact') push(this.exact, value, e);
      else if (type === 'PathPrefix') push(this.prefix, prefixKey(value), e);
      else this.scans.push({ rank: pathRank(e.match), entry: e });
    }
    this.pending.length = 0;
    for (const list of this.exact.values()) list.sort(compareEntries);
    for (const list of this.prefix.values()) list.sort(compareEntries);
    this.scans.sort((a, b) => b.rank - a.rank || compareEntries(a.entry, b.entry));
  }

  lookup(
    path: string,
    method: string,
    headers: Readonly<Record<string, string>> | undefined,
    query: string,
  ): Entry | undefined {
    const exact = this.exact.get(path);
    if (exact) {
      for (const e of exact) if (e.test(method, headers, query)) return e;
    }
    const scans = this.scans;
    let s = 0;
    // Walk the path's prefixes from the longest (the whole path) down to `/`, element by element.
    let end = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
    for (;;) {
      const key = end === 0 ? '/' : path.slice(0, end);
      const rank = prefixRank(key.length);
      for (; s < scans.length && (scans[s] as Ranked).rank > rank; s++) {
        const e = (scans[s] as Ranked).entry;
        if (e.pathTest?.(path) !== false && e.test(method, headers, query)) return e;
      }
      const list = this.prefix.get(key);
      if (list) {
        for (const e of list) if (e.test(method, headers, query)) return e;
      }
      if (end === 0) break;
      end = path.lastIndexOf('/', end - 1);
      if (end < 0) break;
    }
    for (; s < scans.length; s++) {
      const e = (scans[s] as Ranked).entry;
      if (e.pathTest?.(path) !== false && e.test(method, headers, query)) return e;
    }
    return undefined;
  }

  get empty(): boolean {
    return (
      this.exact.size === 0 && this.prefix.size === 0 && this.scans.length === 0 && this.pending.length === 0
    );
  }
}

function push(map: Map<string, Entry[]>, key: string, e: Entry): void {
  const list = map.get(key);
  if (list) list.push(e);
  else map.set(key, [e]);
}
