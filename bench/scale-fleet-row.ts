// One row of `bench:scale --fleet`: one control plane (`serve --xds`, delta ADS) feeding two
// real Envoys and lightweight ADS clients, at one number of routes, from one provider.
import type { CpuMedians } from './scale-fleet-cpu.js';
import type { SlowChange, StageMedians } from './scale-fleet-stages.js';

/** Seconds until a change answered on both real Envoys: each change's, their median and p95. */
export interface ChangeTimes {
  readonly seconds: readonly number[];
  readonly median: number;
  readonly p95: number;
}

/** What /v1/xds `sent` grew by for one Envoy over one change: median over changes and Envoys. */
export interface SentPerChange {
  readonly resources: number;
  readonly bytes: number;
}

/** The control plane's memory at one point, in MiB. */
export interface MemoryPoint {
  /** RSS after full GCs of the main thread until its memory stops falling (2 s after each for pages to be handed back). */
  readonly rss: number;
  /** The main thread's V8 heap in use plus memory outside it (Buffers), read with the RSS. */
  readonly live: number;
  /** The two parts of `live`. */
  readonly heap: number;
  readonly external: number;
  /** Peak RSS since the point before (for the first: since the start). */
  readonly peak: number;
}

export type ChangeKind = 'add' | 'edit' | 'delete';

export interface FleetRow {
  readonly provider: 'files' | 'kubernetes';
  readonly routes: number;
  /** Envoys on the control plane while changes were timed: real ones and lightweight clients. */
  readonly realEnvoys: number;
  readonly lightClients: number;
  /** From `serve`'s start to /readyz answering 200. */
  readonly readySeconds: number;
  /** From `serve`'s start to the last route answering through the first Envoy (started at /readyz). */
  readonly firstServedSeconds: number;
  /** The control plane's peak RSS until then, in MiB. */
  readonly readyPeakMiB: number;
  /** Kubernetes: from the last route served to its status written (all routes' status). */
  readonly statusSeconds?: number;
  /**
   * The control plane's memory with the first Envoy alone, with both real Envoys, and with
   * the lightweight clients too, each once every Envoy took the generation.
   */
  readonly memory: {
    readonly oneEnvoy: MemoryPoint;
    readonly twoEnvoys: MemoryPoint;
    readonly allEnvoys: MemoryPoint;
  };
  /** The peak during the changes. */
  readonly changesPeakMiB: number;
  /** The first real Envoy's peak RSS over the whole run, in MiB. */
  readonly envoyPeakMiB: number;
  /** From the file saved or the request sent until both real Envoys serve the change. */
  readonly changes: Readonly<Record<ChangeKind, ChangeTimes>>;
  /** Where a change's time went, stage by stage (medians; absent in runs before session 16). */
  readonly stages?: Readonly<Record<ChangeKind, StageMedians>>;
  /** The two slowest changes of each kind, stage by stage (absent in runs before session 18). */
  readonly slowest?: Readonly<Record<ChangeKind, readonly SlowChange[]>>;
  /**
   * Each part's CPU over a change (from its start until both real Envoys serve it) and steadfast's
   * GC in that window: medians, and how many changes had a major GC (absent before session 19).
   */
  readonly cpu?: Readonly<Record<ChangeKind, CpuMedians>>;
  /** The provider's settle it was measured with (scale-fleet-settle.ts); absent in rows recorded before. */
  readonly settle?: string;
  /** API server: each change's request, from sending it to its answer read. */
  readonly requests?: Readonly<Record<ChangeKind, ChangeTimes>>;
  /**
   * API server: what kubectl's process adds around one request (which the committed runs before
   * session 16 counted): `kubectl patch --dry-run=server`'s wall time, and the same request sent
   * directly, alternately.
   */
  readonly kubectl?: { readonly kubectl: ChangeTimes; readonly request: ChangeTimes };
  /** Per real Envoy, and per lightweight client. */
  readonly sent: Readonly<Record<ChangeKind, SentPerChange>>;
  readonly lightSent: Readonly<Record<ChangeKind, SentPerChange>>;
  /** An EndpointSlice change (files only: a Kubernetes slice here names an FQDN, no EDS), per real Envoy. */
  readonly endpointSent?: SentPerChange;
  /** A third real Envoy started once all settled: from its start to its last route answering. */
  readonly newEnvoySeconds: number;
  /** What it was sent until then. */
  readonly newEnvoySent: SentPerChange;
}
