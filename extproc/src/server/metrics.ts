// The control service's Prometheus metrics, in a registry of its own (never the global
// one), all prefixed `steadfast_`.
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { WatchedSecret } from '../provider/key-source.js';
import type { StatusLeadership } from '../provider/provider.js';
import { ExtProcTallies, RESOLVE_BUCKETS } from './grpc/ext-proc-tallies.js';

/** A labelled counter that adds what `tallies` gained since it was last scraped. */
function tallyCounter<K extends string>(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  tallies: Readonly<Record<K, number>>,
): Counter {
  const reported = Object.fromEntries(Object.keys(tallies).map((k) => [k, 0])) as Record<K, number>;
  return new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect(this: Counter) {
      for (const k of Object.keys(tallies) as K[]) {
        const gained = tallies[k] - reported[k];
        if (gained > 0) this.inc({ [label]: k }, gained);
        reported[k] = tallies[k];
      }
    },
  });
}

function streamsGauge(registry: Registry, t: ExtProcTallies): Gauge {
  return new Gauge({
    name: 'steadfast_extproc_streams',
    help: 'ext_proc streams open now (one per in-flight request).',
    registers: [registry],
    collect(this: Gauge) {
      this.set(t.streams);
    },
  });
}

/** `steadfast_extproc_resolve_seconds`: a histogram read from the tallies when scraped. */
function resolveHistogram(registry: Registry, t: ExtProcTallies): Metric {
  const name = 'steadfast_extproc_resolve_seconds';
  const help = 'Time to resolve one request to its policy token.';
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: () => {
      let cumulative = 0;
      const values = RESOLVE_BUCKETS.map((le, i) => {
        cumulative += t.resolveBuckets[i] as number;
        return { labels: { le }, value: cumulative, metricName: `${name}_bucket` };
      });
      return Promise.resolve({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: [
          ...values,
          { labels: { le: '+Inf' }, value: t.resolveCount, metricName: `${name}_bucket` },
          { labels: {}, value: t.resolveSum, metricName: `${name}_sum` },
          { labels: {}, value: t.resolveCount, metricName: `${name}_count` },
        ],
      });
    },
    reset: () => undefined,
  };
  registry.registerMetric(metric as unknown as Metric);
  return metric as unknown as Metric;
}

export class ServiceMetrics {
  readonly registry = new Registry();

  /** ext_proc counts here, in plain numbers; the four metrics below read it when scraped. */
  readonly extProc = new ExtProcTallies();

  readonly extProcRequests = tallyCounter(
    this.registry,
    'steadfast_extproc_requests_total',
    'ext_proc request-header messages answered, by result (matched, unmatched, invalid: a rule that fails closed, error).',
    'result',
    this.extProc.requests,
  );

  readonly extProcResolveSeconds = resolveHistogram(this.registry, this.extProc);

  readonly extProcStreams: Gauge = streamsGauge(this.registry, this.extProc);

  readonly extProcListeners = tallyCounter(
    this.registry,
    'steadfast_extproc_listener_total',
    "ext_proc requests by how their Gateway port was told: metadata (the Envoy listener's steadfast.gateway_port), destination_port, single_port (the configuration has one), unknown (answered only where every port agrees).",
    'by',
    this.extProc.listeners,
  );

  readonly extProcErrors = tallyCounter(
    this.registry,
    'steadfast_extproc_errors_total',
    'ext_proc streams or messages that failed, by kind.',
    'kind',
    this.extProc.errors,
  );

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

  /** The Lease (a cluster with replicas): whether this replica writes status, and how much it wrote. */
  followLeadership(read: () => StatusLeadership | undefined): void {
    new Gauge({
      name: 'steadfast_kubernetes_leader',
      help: '1 while this replica holds the Lease and writes status, else 0.',
      registers: [this.registry],
      collect(this: Gauge) {
        this.set(read()?.leading ? 1 : 0);
      },
    });
    let reported = 0;
    new Counter({
      name: 'steadfast_kubernetes_status_writes_total',
      help: 'Status writes this replica made to the API server.',
      registers: [this.registry],
      collect(this: Counter) {
        const writes = read()?.statusWrites ?? 0;
        if (writes > reported) this.inc(writes - reported);
        reported = writes;
      },
    });
    new Gauge({
      name: 'steadfast_kubernetes_status_pending',
      help: 'Objects whose status waits to be checked or written (--kube-api-qps paces the writes).',
      registers: [this.registry],
      collect(this: Gauge) {
        this.set(read()?.statusPending ?? 0);
      },
    });
  }

  /** Secrets watched by name (session keys, the ADS port's TLS): whether each watch runs. */
  followSecretWatches(read: () => readonly WatchedSecret[]): void {
    new Gauge({
      name: 'steadfast_kubernetes_secret_watched',
      help: 'Per Secret named by a flag: 1 while it is watched, 0 while its list or watch fails (tried again; the data last read stays in use).',
      labelNames: ['secret', 'flag'],
      registers: [this.registry],
      collect(this: Gauge<'secret' | 'flag'>) {
        this.reset();
        for (const s of read()) this.set({ secret: s.secret, flag: s.flag }, s.watched ? 1 : 0);
      },
    });
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'steadfast_process_' });
  }
}
