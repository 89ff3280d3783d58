// The messages between `steadfast serve --workers N` and its ext_proc worker processes
// (node:cluster IPC). The primary owns the configuration; workers only resolve.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { TableJson } from '../pipeline/table-json.js';
import type { ListenerProblemView } from './admin/config-view.js';

/** One process's metrics as `registry.getMetricsAsJSON()` gives them. */
export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** The policy table of a configuration generation (server/worker-tables.ts). */
export interface PolicyMessage {
  readonly type: 'steadfast:policy';
  readonly generation: number;
  /** The resolver's generation (its answers' scope), as the primary compiled it. */
  readonly answerGeneration: string;
  readonly table: TableJson;
}

/** Primary → worker. */
export type ToWorker =
  | PolicyMessage
  | { readonly type: 'steadfast:static-token'; readonly token: string }
  | { readonly type: 'steadfast:metrics-request'; readonly id: number }
  | { readonly type: 'steadfast:stop' };

/** Worker → primary. */
export type FromWorker =
  /** Sent once the worker listens for messages: 'online' comes before its module has loaded. */
  | { readonly type: 'steadfast:waiting' }
  | { readonly type: 'steadfast:listening'; readonly address: string }
  | { readonly type: 'steadfast:listen-failed'; readonly message: string }
  | { readonly type: 'steadfast:metrics'; readonly id: number; readonly metrics: WorkerMetrics }
  /** A policy table the worker could not read (it refers to a table the worker does not hold). */
  | { readonly type: 'steadfast:policy-refused'; readonly message: string }
  | { readonly type: 'steadfast:log'; readonly line: string }
  /** A request whose Gateway port could not be told: once per case, for the log and /v1/status. */
  | { readonly type: 'steadfast:listener-problem'; readonly problem: ListenerProblemView };

/** The environment variable that tells a worker where to listen. */
export const WORKER_GRPC_ADDRESS_ENV = 'STEADFAST_WORKER_GRPC_ADDRESS';

export function isMessage<T extends { type: string }>(m: unknown): m is T {
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof (m as { type?: unknown }).type === 'string' &&
    (m as { type: string }).type.startsWith('steadfast:')
  );
}
