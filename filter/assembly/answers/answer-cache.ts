// Attach mode's answer cache: ext_proc answers this VM has seen, by the key of the requests
// they hold for (answer-key.ts), so a request whose answer is known skips ext_proc. One per
// VM (module state), shared by the filter instance that looks answers up before ext_proc
// and the one that stores fresh answers after it.
//
// Staleness: an entry is fresh for `ttlMs` after it was stored; then the next request that
// meets it asks ext_proc again while the others keep using it for at most REFRESH_GRACE_MS
// more (so a busy key does not send a burst of requests to ext_proc each time it expires);
// then it is gone. A fresh answer from another configuration generation empties the cache
// at once. Bounded: two segments of at
// most ENTRIES_PER_SEGMENT keys; when the young one is full it becomes the old one and the
// previous old one is dropped; an old entry that is used moves back to the young segment
// (a cheap approximation of least-recently-used).
import { AnswerScope } from './answer-scope';

export const ENTRIES_PER_SEGMENT: i32 = 2048;
/** The value the lookup hands on for "no rule matches": not a policy token (those start `sf1;`). */
export const NO_POLICY = 'sf0';
/** How long a stale entry still serves while one request refreshes it. */
export const REFRESH_GRACE_MS: u32 = 300;
/** How long a claimed refresh may take before another request claims it (ext_proc's message_timeout is 0.2 s). */
const REFRESH_CLAIM_NS: u64 = 250_000_000;

export class CachedAnswer {
  constructor(
    /** The policy token, or NO_POLICY. */
    public readonly token: string,
    /** From this time on, one request asks ext_proc again (then another, every REFRESH_CLAIM_NS). */
    public refreshNs: u64,
    /** Not used from this time on. */
    public readonly expiresNs: u64,
    /**
     * A marker: the answer itself is under the longer key (answer-key.ts fullKey) with the
     * query, the listener and/or the values of these request headers.
     */
    public readonly byQuery: bool,
    public readonly byListener: bool,
    public readonly byHeaders: string[] | null,
  ) {}

  get marker(): bool {
    return this.byQuery || this.byListener || this.byHeaders != null;
  }
}

export class AnswerCache {
  private young: Map<string, CachedAnswer> = new Map<string, CachedAnswer>();
  private old: Map<string, CachedAnswer> = new Map<string, CachedAnswer>();
  /** The configuration generation the entries came from. */
  generation: string = '';

  get size(): i32 {
    return this.young.size + this.old.size;
  }

  /** The live entry under `key`, or null. */
  find(key: string, nowNs: u64): CachedAnswer | null {
    let e: CachedAnswer | null = null;
    if (this.young.has(key)) {
      e = this.young.get(key);
    } else if (this.old.has(key)) {
      e = this.old.get(key);
      if (e.expiresNs > nowNs) this.put(key, e);
    }
    return e != null && e.expiresNs > nowNs ? e : null;
  }

  /**
   * Whether the request that found `e` should ask ext_proc instead (the entry is due for a
   * refresh): true for one request per REFRESH_CLAIM_NS, the others keep using it.
   */
  claimRefresh(e: CachedAnswer, nowNs: u64): bool {
    if (nowNs < e.refreshNs) return false;
    e.refreshNs = nowNs + REFRESH_CLAIM_NS;
    return true;
  }

  /**
   * Stores an answer for `base`, or for `full` (base plus what the scope adds) with a marker
   * under `base`. An answer from another generation empties the cache first: it is the
   * newest one seen.
   */
  store(scope: AnswerScope, base: string, full: string | null, token: string, nowNs: u64, ttlMs: u32): void {
    if (scope.generation != this.generation) {
      this.clear();
      this.generation = scope.generation;
    }
    const refresh = nowNs + <u64>ttlMs * 1_000_000;
    const expires = refresh + <u64>REFRESH_GRACE_MS * 1_000_000;
    if (!scope.query && !scope.listener && scope.headers == null) {
      this.put(base, new CachedAnswer(token, refresh, expires, false, false, null));
    } else if (full != null) {
      // The marker never asks for a refresh itself: the answer under `full` does.
      this.put(base, new CachedAnswer('', expires, expires, scope.query, scope.listener, scope.headers));
      this.put(full, new CachedAnswer(token, refresh, expires, false, false, null));
    }
  }

  clear(): void {
    this.young = new Map<string, CachedAnswer>();
    this.old = new Map<string, CachedAnswer>();
  }

  private put(key: string, e: CachedAnswer): void {
    if (!this.young.has(key) && this.young.size >= ENTRIES_PER_SEGMENT) {
      this.old = this.young;
      this.young = new Map<string, CachedAnswer>();
    }
    this.young.set(key, e);
  }
}

/** The VM's one cache. */
export const ANSWERS = new AnswerCache();
