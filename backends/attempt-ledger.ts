// Per-uuid attempt counting and timing, shared by every backend instance that is handed the same ledger,
// so a retry that lands on another backend still counts as the next attempt. Bounded: least recently
// used uuids are forgotten first, and only the first attempts of each uuid keep their timings.
import { performance } from 'node:perf_hooks';

/** How an attempt ended: a response was sent, the transport was reset, or the client went away first. */
export type AttemptOutcome = 'pending' | 'response' | 'reset' | 'refused' | 'aborted';

export interface AttemptRecord {
  /** 1-based position of this attempt among all attempts seen for its uuid. */
  readonly attempt: number;
  readonly instance: string;
  readonly protocol: string;
  readonly method: string;
  /** The request target (path and query) and Host the attempt arrived with, when the backend says. */
  readonly target?: string;
  readonly host?: string;
  /** Wall-clock milliseconds since the Unix epoch, sub-millisecond precision. */
  readonly arrivedAtMs: number;
  endedAtMs: number | null;
  outcome: AttemptOutcome;
  /** HTTP status or gRPC status code sent; null when no status was sent. */
  status: number | null;
  /** True when the retry simulation made this attempt fail. */
  failed: boolean;
}

export interface AttemptStart {
  readonly instance: string;
  readonly protocol: string;
  readonly method: string;
  readonly target?: string;
  readonly host?: string;
}

export interface LedgerLimits {
  readonly maxKeys?: number;
  readonly maxRecordsPerKey?: number;
  /**
   * Numbers the attempts instead of this ledger's own count: backends in separate processes
   * (one container each in docker compose) hand theirs the same shared counter.
   */
  readonly counter?: AttemptCounter;
}

/** Numbers the attempts of a uuid, 1, 2, 3, … across everyone who shares it. */
export interface AttemptCounter {
  /** Counts one more attempt for the uuid and returns its number. */
  next(uuid: string): number;
  /** How many attempts were counted for the uuid. */
  count(uuid: string): number;
}

interface Entry {
  count: number;
  readonly records: AttemptRecord[];
}

/** Milliseconds since the Unix epoch with the monotonic clock's resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export class AttemptLedger {
  readonly #entries = new Map<string, Entry>();
  readonly #maxKeys: number;
  readonly #maxRecords: number;
  readonly #counter: AttemptCounter | undefined;

  constructor(limits: LedgerLimits = {}) {
    this.#maxKeys = limits.maxKeys ?? 10_000;
    this.#maxRecords = limits.maxRecordsPerKey ?? 32;
    this.#counter = limits.counter;
  }

  /** Counts a new attempt for the uuid and returns its record, to be completed with `finish`. */
  begin(uuid: string, start: AttemptStart): AttemptRecord {
    const entry = this.#touch(uuid);
    entry.count = this.#counter ? this.#counter.next(uuid) : entry.count + 1;
    const record: AttemptRecord = {
      attempt: entry.count,
      instance: start.instance,
      protocol: start.protocol,
      method: start.method,
      ...(start.target !== undefined ? { target: start.target } : {}),
      ...(start.host !== undefined ? { host: start.host } : {}),
      arrivedAtMs: nowMs(),
      endedAtMs: null,
      outcome: 'pending',
      status: null,
      failed: false,
    };
    if (entry.records.length < this.#maxRecords) entry.records.push(record);
    return record;
  }

  /** Attempts recorded for the uuid by this ledger, oldest first; empty for an unknown uuid. */
  attempts(uuid: string): readonly AttemptRecord[] {
    return (this.#entries.get(uuid)?.records ?? []).map((record) => ({ ...record }));
  }

  /** How many attempts were seen for the uuid, including those beyond the recorded ones. */
  count(uuid: string): number {
    return this.#counter ? this.#counter.count(uuid) : (this.#entries.get(uuid)?.count ?? 0);
  }

  get size(): number {
    return this.#entries.size;
  }

  #touch(uuid: string): Entry {
    const found = this.#entries.get(uuid);
    if (found !== undefined) {
      this.#entries.delete(uuid);
      this.#entries.set(uuid, found);
      return found;
    }
    const entry: Entry = { count: 0, records: [] };
    this.#entries.set(uuid, entry);
    while (this.#entries.size > this.#maxKeys) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    return entry;
  }
}

/** Completes an attempt record once; later calls are ignored so the first ending wins. */
export function finishAttempt(
  record: AttemptRecord,
  outcome: Exclude<AttemptOutcome, 'pending'>,
  status: number | null,
): void {
  if (record.outcome !== 'pending') return;
  record.outcome = outcome;
  record.status = status;
  record.endedAtMs = nowMs();
}
