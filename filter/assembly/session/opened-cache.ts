// Session tokens this VM has opened, so a resumed session skips base64 and the AEAD.
// An entry holds exactly what `open` found for one token under one rule; the caller still
// checks expiry and idleness against the clock on every use, so a cached token is never
// trusted past what `open` would say now. Keys change only by reconfiguring, which
// clears the cache. Bounded: when full it is emptied (the next uses reopen).

/** What an authentic token says, and the pin header value for its endpoint. */
export class CachedSession {
  constructor(
    /** The rule it was opened for (the token is bound to it). */
    public readonly rule: string,
    public readonly endpoint: string,
    /** base64 of `endpoint`, as stateful_session reads it. */
    public readonly pin: string,
    public readonly issuedAtS: u64,
    public readonly lastUsedS: u64,
    /** 0 when the session has no expiry. */
    public readonly expiresAtS: u64,
  ) {}
}

export const OPENED_CACHE_ENTRIES: i32 = 4096;

export class OpenedSessionCache {
  private readonly entries: Map<string, CachedSession> = new Map<string, CachedSession>();

  get size(): i32 {
    return this.entries.size;
  }

  /** The entry for `token` opened under `rule`, or null. */
  find(token: string, rule: string): CachedSession | null {
    if (!this.entries.has(token)) return null;
    const entry = this.entries.get(token);
    // A token is bound to its rule: under another rule `open` would refuse it.
    return entry.rule == rule ? entry : null;
  }

  remember(token: string, entry: CachedSession): void {
    if (this.entries.size >= OPENED_CACHE_ENTRIES) this.entries.clear();
    this.entries.set(token, entry);
  }

  clear(): void {
    this.entries.clear();
  }
}
