// `steadfast serve --workers N`: N worker processes (node:cluster) share one gRPC port; the
// primary keeps the configuration, the admin API and the metrics. Envoy opens an HTTP/2
// connection per worker thread to the ext_proc cluster; the primary hands each accepted
// connection to the next worker in turn, so the streams spread with the connections.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { AggregatorRegistry } from 'prom-client';
import { buildAdminServer } from './admin/admin-server.js';
import type { ControlService } from './control-service.js';
import {
  type FromWorker,
  type ToWorker,
  type WorkerMetrics,
  WORKER_GRPC_ADDRESS_ENV,
  isMessage,
} from './ext-proc-worker-messages.js';
import type { ServiceMetrics } from './metrics.js';
import type { ServedConfig } from './served-config.js';
import { WorkerTableSender } from './worker-tables.js';

export interface ExtProcWorkersOptions {
  readonly workers: number;
  readonly grpcAddress: string;
  readonly adminAddress: string;
  readonly adminPort: number;
  readonly metrics: ServiceMetrics;
  readonly notReadyReason: () => string | null;
  readonly log: (line: string) => void;
  readonly config?: ServedConfig;
  readonly staticToken?: string;
  /** The ADS server's view of its Envoys, for /v1/xds. */
  readonly xds?: () => unknown;
}

const RESTART_DELAY_MS = 200;

/**
 * `--workers` when not given: one process up to 2 CPUs (Envoy needs the other, and a second
 * Node process measured no gain there, docs/attach.md), else one per two CPUs, at most 8 —
 * Envoy's own workers take the other half, and it opens one connection per worker thread.
 */
export function defaultExtProcWorkers(cpus: number): number {
  return cpus <= 2 ? 1 : Math.min(8, Math.floor(cpus / 2));
}
const METRICS_TIMEOUT_MS = 1000;

/** The primary's side of its workers: forks them, keeps each one's policy table fresh, restarts one that exits. */
class WorkerPool {
  readonly live = new Map<number, Worker>();
  private stopping = false;
  private nextRequest = 0;
  private readonly pendingMetrics = new Map<number, (m: WorkerMetrics) => void>();
  /** What each worker was sent of the policy tables, by worker id. */
  private readonly senders = new Map<number, WorkerTableSender>();

  constructor(private readonly options: ExtProcWorkersOptions) {
    options.config?.onSwap(() => {
      for (const w of this.live.values()) {
        if (!w.isConnected()) continue;
        const m = this.policyMessage(w);
        if (m) w.send(m);
      }
    });
  }

  /** The current policy for one worker: only what it does not hold crosses. */
  private policyMessage(worker: Worker, whole = false): ToWorker | undefined {
    const { config, staticToken } = this.options;
    const snap = config?.snapshot;
    if (config && snap) {
      let sender = this.senders.get(worker.id);
      if (!sender) this.senders.set(worker.id, (sender = new WorkerTableSender()));
      return sender.message(snap, config.generation, whole);
    }
    if (staticToken !== undefined) return { type: 'steadfast:static-token', token: staticToken };
    return undefined;
  }

  /** Starts a worker; resolves with the address it listens on. */
  fork(): Promise<string> {
    return new Promise((resolve, reject) => {
      // Every worker asks for the address as given: the primary shares one listening socket per
      // requested address (port 0 included), so all workers get the same port.
      const worker = cluster.fork({ [WORKER_GRPC_ADDRESS_ENV]: this.options.grpcAddress });
      this.live.set(worker.id, worker);
      worker.on('message', (m: unknown) => {
        if (!isMessage<FromWorker>(m)) return;
        if (m.type === 'steadfast:listening') resolve(m.address);
        else if (m.type === 'steadfast:listen-failed') reject(new Error(m.message));
        else this.onMessage(worker, m);
      });
      worker.on('exit', (code, signal) => {
        reject(new Error(`ext_proc worker exited (${signal ?? code}) before it listened`));
        this.onExit(worker, signal ?? code);
      });
    });
  }

  private onMessage(worker: Worker, m: FromWorker): void {
    const log = this.options.log;
    if (m.type === 'steadfast:waiting') {
      const policy = this.policyMessage(worker);
      if (policy) worker.send(policy);
    } else if (m.type === 'steadfast:policy-refused') {
      // A whole table refers to no other: sent again, it would be refused again.
      if (this.senders.get(worker.id)?.sentWhole) {
        log(`worker ${worker.id} could not read the policy table (${m.message}); it keeps the one it has`);
        return;
      }
      log(`worker ${worker.id} could not read the policy table (${m.message}); sending it whole`);
      const policy = this.policyMessage(worker, true);
      if (policy && worker.isConnected()) worker.send(policy);
    } else if (m.type === 'steadfast:metrics') this.pendingMetrics.get(m.id)?.(m.metrics);
    else if (m.type === 'steadfast:log') log(`worker ${worker.id}: ${m.line}`);
    else if (m.type === 'steadfast:listener-problem') this.options.config?.noteListenerProblem(m.problem);
  }

  private onExit(worker: Worker, why: string | number | null): void {
    this.live.delete(worker.id);
    this.senders.delete(worker.id);
    if (this.stopping) return;
    this.options.metrics.workerRestarts.inc();
    this.options.log(`ext_proc worker ${worker.id} exited (${why}); starting another`);
    setTimeout(() => {
      if (!this.stopping)
        this.fork().catch((e: Error) => this.options.log(`ext_proc worker did not start: ${e.message}`));
    }, RESTART_DELAY_MS);
  }

  /** Every worker's metrics with the primary's, as one Prometheus text. */
  async metricsText(): Promise<string> {
    const workers = [...this.live.values()].filter((w) => w.isConnected());
    const answers = await Promise.all(workers.map((w) => this.metricsOf(w)));
    const own = await this.options.metrics.registry.getMetricsAsJSON();
    return AggregatorRegistry.aggregate([own, ...answers.filter((a) => a.length > 0)]).metrics();
  }

  /** A worker's metrics; none when it does not answer in time. */
  private metricsOf(w: Worker): Promise<WorkerMetrics> {
    return new Promise<WorkerMetrics>((resolve) => {
      const id = ++this.nextRequest;
      const timer = setTimeout(() => {
        this.pendingMetrics.delete(id);
        resolve([]);
      }, METRICS_TIMEOUT_MS);
      this.pendingMetrics.set(id, (m) => {
        clearTimeout(timer);
        this.pendingMetrics.delete(id);
        resolve(m);
      });
      w.send({ type: 'steadfast:metrics-request', id } satisfies ToWorker);
    });
  }

  /** Kills every worker at once (the admin API could not start). */
  kill(): void {
    this.stopping = true;
    for (const w of this.live.values()) w.kill();
  }

  /** Asks every worker to drain and waits for it to exit (killed after 6 s). */
  async stop(): Promise<void> {
    this.stopping = true;
    const exits = [...this.live.values()].map(
      (w) =>
        new Promise<void>((resolve) => {
          const killer = setTimeout(() => w.kill('SIGKILL'), 6000);
          w.once('exit', () => {
            clearTimeout(killer);
            resolve();
          });
          if (w.isConnected()) w.send({ type: 'steadfast:stop' } satisfies ToWorker);
          else w.kill();
        }),
    );
    await Promise.all(exits);
  }
}

export async function startExtProcWorkers(options: ExtProcWorkersOptions): Promise<ControlService> {
  const { config } = options;
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./ext-proc-worker.js', import.meta.url)), args: [] });
  const pool = new WorkerPool(options);
  const boundAddress = await pool.fork();
  await Promise.all(Array.from({ length: options.workers - 1 }, () => pool.fork()));
  const admin = buildAdminServer({
    metrics: options.metrics,
    notReadyReason: () =>
      options.notReadyReason() ?? (pool.live.size === 0 ? 'no ext_proc worker running' : null),
    metricsText: () => pool.metricsText(),
    ...(config ? { config } : {}),
    ...(options.xds ? { xds: options.xds } : {}),
  });
  let adminUrl: string;
  try {
    adminUrl = await admin.listen({ host: options.adminAddress, port: options.adminPort });
  } catch (e) {
    pool.kill();
    throw new Error(
      `cannot serve the admin API on ${options.adminAddress}:${options.adminPort}: ${(e as Error).message}`,
    );
  }
  return {
    grpcAddress: boundAddress,
    adminUrl,
    metrics: options.metrics,
    stop: async () => {
      await Promise.all([pool.stop(), admin.close()]);
    },
  };
}
