// The control service's Prometheus metrics, in a registry of its own (never the global
// one), all prefixed `steadfast_`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly extProcRequests = new Counter({
    name: 'steadfast_extproc_requests_total',
    help: 'ext_proc request-header messages answered, by result (matched, unmatched, invalid: a rule that fails closed, error).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly extProcResolveSeconds = new Histogram({
    name: 'steadfast_extproc_resolve_seconds',
    help: 'Time to resolve one request to its policy token.',
    buckets: [1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 1e-2],
    registers: [this.registry],
  });

  readonly extProcStreams = new Gauge({
    name: 'steadfast_extproc_streams',
    help: 'ext_proc streams open now (one per in-flight request).',
    registers: [this.registry],
  });

  readonly extProcErrors = new Counter({
    name: 'steadfast_extproc_errors_total',
    help: 'ext_proc streams or messages that failed, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly configReloads = new Counter({
    name: 'steadfast_config_reloads_total',
    help: 'Configurations swapped in (the first load counts as one).',
    registers: [this.registry],
  });

  readonly configReloadErrors = new Counter({
    name: 'steadfast_config_reload_errors_total',
    help: 'Reloads refused because the new configuration did not load; the previous one stays.',
    registers: [this.registry],
  });

  readonly configGeneration = new Gauge({
    name: 'steadfast_config_generation',
    help: 'Generation of the configuration being served (0 until the first load).',
    registers: [this.registry],
    aggregator: 'max',
  });

  readonly configMatches = new Gauge({
    name: 'steadfast_config_matches',
    help: 'Compiled (hostname, match) entries in the resolver being served.',
    registers: [this.registry],
    aggregator: 'max',
  });

  readonly workerRestarts = new Counter({
    name: 'steadfast_extproc_worker_restarts_total',
    help: 'ext_proc worker processes (--workers) that exited unexpectedly and were started again.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'steadfast_process_' });
  }
}
