// When one configuration change passed each stage on its way to the Envoys, in milliseconds since
// the epoch (performance.timeOrigin + performance.now(): comparable between threads and between
// processes on one machine, to a fraction of a millisecond). A few numbers per generation, always
// kept (no string is made for them): /v1/xds shows the latest generation's, and
// `bench:scale --fleet` breaks a change's time down by them (docs/fleet.md).

/** Now, in milliseconds since the epoch, with performance.now()'s resolution. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** A load's way through the pipeline. */
export interface LoadTimes {
  /** The provider's first change event this load answers (none for the first load or a reload asked for). */
  readonly changedAt?: number;
  /** The provider's read started (after the debounce), and ended. */
  readonly readAt: number;
  readonly readDoneAt: number;
  /** On the compiler thread: the request taken, and its answer sent (absent when compiled inline). */
  readonly threadAt?: number;
  readonly threadDoneAt?: number;
  /** The answer back on this thread. */
  readonly receivedAt?: number;
  /** The snapshot built from it: the table read, the IR's ports, the resolver. */
  readonly builtAt: number;
}

/** What a compiler adds to the load's times (SnapshotCompiler: its thread's). */
export type CompileTimes = Pick<LoadTimes, 'threadAt' | 'threadDoneAt' | 'receivedAt'>;
