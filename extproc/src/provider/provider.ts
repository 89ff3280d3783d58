// The seam between where Gateway API objects come from and the pipeline that compiles
// them. A provider hands over everything it has as plain data (it crosses to the compiler's
// thread), says when that may have changed, and receives the status of every object after
// each compile, keyed by object. It carries its own lifecycle (start, close), so what reads
// from it never knows which one it is: files (file.ts) or an API server (kubernetes/).
import type { Diagnostic } from '../gatewayapi/diagnostic.js';
import type { ConfigFile, ObjectInput } from '../gatewayapi/parse.js';
import type { ObjectStatus } from '../translate/status.js';

/** Everything a provider has now. */
export interface ProvidedConfig {
  /** Documents as text (YAML or JSON): the compiler parses them, so each field keeps its line. */
  readonly documents: readonly ConfigFile[];
  /** Objects already decoded, with a source location when the provider knows one. */
  readonly objects: readonly ObjectInput[];
  /** What the provider could not read (`io-error`), located where it can be. */
  readonly diagnostics: readonly Diagnostic[];
}

/** The status of every object of one compiled generation. */
export interface StatusReport {
  readonly generation: number;
  /** By object: `kind/namespace/name` (translate/status.ts objectKey); the file:line is an attribute. */
  readonly objects: ReadonlyMap<string, ObjectStatus>;
}

/** Which of several replicas writes status: the holder of a Lease (Kubernetes). */
export interface StatusLeadership {
  /** NAMESPACE/NAME of the Lease. */
  readonly lease: string;
  /** This replica's holder identity. */
  readonly identity: string;
  /** This replica holds the Lease now and writes status. */
  readonly leading: boolean;
  /** The holder this replica last read, or null when none holds it. */
  readonly holder: string | null;
  /** ISO time this replica took the Lease, while it holds it. */
  readonly leadingSince: string | null;
  /** Status writes this replica made since it started. */
  readonly statusWrites: number;
  /** Objects whose status waits to be checked or written: the backlog the rate limit leaves. */
  readonly statusPending: number;
  /** While this replica neither holds the Lease nor can try for it: `cannot elect: <reason>`. */
  readonly problem?: string;
}

export interface Provider {
  /** What it reads, for logs: a directory, a cluster. */
  readonly description: string;
  /**
   * How long its changes take to settle, in ms, before a reload (default 200): an editor may
   * write a file in steps, while an API server's watch delivers each object whole.
   */
  readonly settleMs?: number;
  /**
   * How long a run of changes that never pauses may postpone its reload, in ms (default five
   * settle periods): changes that keep coming must not hold every other change back. Equal to
   * settleMs, the settle is a window from the first change rather than a quiet period.
   */
  readonly maxWaitMs?: number;
  /**
   * Whether a change may be read and compiled as soon as it comes after a settle's quiet, the
   * settle then holding only the swap (a change within it discards that compile): true when a
   * read never sees half a change, as with an API server's watch; files may be read mid-write.
   */
  readonly readsEarly?: boolean;
  /** Connects and reads what it needs first; rejects with the reason it cannot serve. */
  start(): Promise<void>;
  read(): Promise<ProvidedConfig>;
  /**
   * Calls `changed` whenever read() may answer differently, with what changed (a file, an
   * object) for logs; returns what stops watching.
   */
  watch(changed: (what: string) => void): () => void;
  /** Called after every generation is swapped in. */
  report(status: StatusReport): void;
  /** Who writes status among replicas; absent for a provider that has no Lease (files). */
  leadership?(): StatusLeadership;
  /** Stops watching and lets go of what it holds (watches, connections, a Lease it holds). */
  close(): void | Promise<void>;
}
