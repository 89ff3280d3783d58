// What ext_proc counts, as plain numbers: the per-request path only adds to fields of
// objects made once, with no label lookup and no allocation; the service's metrics
// registry reads them when it is scraped (server/metrics.ts).
import type { ListenerBy } from '../../resolve/request.js';

export type RequestResult = 'matched' | 'unmatched' | 'invalid' | 'error';
export type ErrorKind = 'resolve' | 'stream' | 'unexpected_message' | 'internal' | 'cancelled_unanswered';

/** Upper bounds of the resolve-time histogram, in seconds (Prometheus `le`). */
export const RESOLVE_BUCKETS: readonly number[] = [
  1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 1e-2,
];

export class ExtProcTallies {
  /** Request-header messages answered, by result. */
  readonly requests: Record<RequestResult, number> = { matched: 0, unmatched: 0, invalid: 0, error: 0 };
  readonly errors: Record<ErrorKind, number> = {
    resolve: 0,
    stream: 0,
    unexpected_message: 0,
    internal: 0,
    cancelled_unanswered: 0,
  };
  /** Request-header messages resolved, by how their Gateway port was told. */
  readonly listeners: Record<ListenerBy, number> = {
    metadata: 0,
    destination_port: 0,
    single_port: 0,
    unknown: 0,
  };
  /** Streams open now. */
  streams = 0;
  /** Resolve times: the count in each bucket (not cumulative), the last one past every bound. */
  readonly resolveBuckets = new Float64Array(RESOLVE_BUCKETS.length + 1);
  resolveSum = 0;
  resolveCount = 0;

  observeResolve(seconds: number): void {
    let i = 0;
    while (i < RESOLVE_BUCKETS.length && seconds > (RESOLVE_BUCKETS[i] as number)) i++;
    (this.resolveBuckets[i] as number)++;
    this.resolveSum += seconds;
    this.resolveCount++;
  }
}
