// The seam for session keys, beside the one for objects: where the ring comes from (a key
// file, keys given inline, a Kubernetes Secret) is the source's business; what takes it only
// reads the ring, hears of a new one, and closes the source.

export interface SessionKeyRing {
  /** Standard base64, as the filter's `sessionKeys` takes them; the first seals, all open. */
  readonly keys: readonly string[];
  /** Key ids (hex), safe to log: a key itself never is. */
  readonly ids: readonly string[];
}

export interface KeySource {
  /** Where the keys come from, for logs: a file, `--session-key`, a Secret. */
  readonly description: string;
  /** Reads the ring once; rejects with the reason when it cannot be read or is not a key ring. */
  start(): Promise<SessionKeyRing>;
  /**
   * Calls `changed` with every new ring after start(), and `refused` with the reason a new
   * one was not taken (the ring in use stays). A source that cannot change never calls either.
   */
  watch(changed: (ring: SessionKeyRing) => void, refused: (why: string) => void): Promise<void>;
  close(): void;
  /** A source that watches a Secret: whether it is watched now (for /metrics). */
  watchStates?(): readonly WatchedSecret[];
}

/** A Secret a source follows by name, and whether its watch runs (not: changes are not seen). */
export interface WatchedSecret {
  /** `namespace/name`. */
  readonly secret: string;
  /** The flag that names it. */
  readonly flag: string;
  readonly watched: boolean;
}
