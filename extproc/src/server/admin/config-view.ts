// What the admin API reads of the configuration being served. The runtime's served
// configuration provides it; the admin API depends on this shape, not on the runtime.
import type { Diagnostic } from '../../gatewayapi/diagnostic.js';
import type { Resolver } from '../../resolve/compile.js';
import type { PolicyTable } from '../../policy/policy-table.js';
import type { ObjectStatus } from '../../translate/status.js';

/** One compiled configuration, as the /v1 endpoints show it. */
export interface ServedSnapshot {
  readonly table: PolicyTable;
  readonly resolver: Resolver;
  readonly statuses: readonly ObjectStatus[];
  /** Problems not tied to an object's status: YAML errors, unknown kinds, duplicates, I/O. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Why the last reload was not swapped in. */
export interface ReloadFailureView {
  readonly at: Date;
  readonly message: string;
  readonly errors: readonly Diagnostic[];
}

/** A generated configuration Envoy refused (gateway mode): it keeps serving the one before. */
export interface EnvoyRejectionView {
  readonly at: Date;
  readonly generation: number;
  /** Envoy's own line saying why. */
  readonly message: string;
}

/**
 * Attach mode: a kind of request whose Gateway port the control service could not tell (or
 * was told one without routes), reported once with what to do.
 */
export interface ListenerProblemView {
  /** Names the case: one report per key. */
  readonly key: string;
  readonly kind: 'no-attributes' | 'unknown-port' | 'metadata-port-without-routes' | 'invalid-metadata';
  /** The Envoy port (`unknown-port`) or the declared Gateway port (`metadata-port-without-routes`). */
  readonly port?: number;
  readonly message: string;
  /** ISO 8601: when the first such request came. */
  readonly firstAt: string;
}

export interface ConfigView {
  /** undefined until the first load. */
  readonly snapshot: ServedSnapshot | undefined;
  readonly generation: number;
  readonly lastFailure: ReloadFailureView | undefined;
  readonly loadedAt: Date | undefined;
  /** The last generation Envoy refused, until a later one is taken (gateway mode only). */
  readonly lastEnvoyRejection?: EnvoyRejectionView | undefined;
  /** Attach mode: requests whose Gateway port could not be told, by case. */
  readonly listenerProblems?: readonly ListenerProblemView[];
  /** Which replica writes status (a cluster's Lease), shown by /readyz; undefined without one. */
  leadership?(): object | undefined;
}
