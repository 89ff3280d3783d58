// A fixed-rate (open-loop) HTTP/1.1 client for latency. Requests fall due at fixed
// intervals whatever the server does, so a server that stalls is charged for every
// request it held back (no coordinated omission): a request that finds all connections
// busy waits in a queue, and its latency counts from when it was due. A request that
// found a free connection counts from when it was written, so the client's own timer
// (Node wakes about once a millisecond and sends what fell due meanwhile) is not charged
// to the server. The client sleeps between sends, so it leaves its CPU to the backends.
import { connect, type Socket } from 'node:net';
import { loopbackAddress } from '../backends/loopback-endpoint.js';

export interface OpenLoopOptions {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Requests per second. */
  readonly rate: number;
  /** Requests sent before measuring starts, to warm connections and JITs. */
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly connections: number;
  /** Called when measuring starts and when it ends (for CPU snapshots). */
  readonly onMeasureStart?: () => void;
  readonly onMeasureEnd?: () => void;
}

export interface OpenLoopResult {
  readonly rate: number;
  /** Responses received for requests due in the measured window. */
  readonly completed: number;
  /** Requests due in the measured window. */
  readonly due: number;
  /** Non-2xx responses, broken connections, unparsable responses, requests never answered. */
  readonly errors: number;
  /** The first non-2xx status line seen, or why a connection broke: for finding out what went wrong. */
  readonly firstError?: string;
  /**
   * Latency in microseconds: from when the request was due if it had to wait for a
   * connection (the server was behind), else from when it was written.
   */
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  /** Latency from when each request was written (what a closed-loop tool reports). */
  readonly serviceP50Us: number;
  readonly serviceP99Us: number;
  /** Latency from when each request was due, the client's own lateness included. */
  readonly fromDueP50Us: number;
  readonly fromDueP99Us: number;
  /** How late requests were written, p99 in microseconds: the client's timer and any queueing. */
  readonly sendLagP99Us: number;
}

interface Pending {
  readonly dueNs: number;
  sentNs: number;
  readonly measured: boolean;
  /** It found no free connection and waited for one. */
  queued: boolean;
}

class Connection {
  readonly socket: Socket;
  inFlight: Pending | undefined;
  error = 'closed by the server';
  private buffer: Buffer = Buffer.alloc(0);

  constructor(
    host: string,
    port: number,
    private readonly onResponse: (c: Connection, status: string) => void,
    private readonly onBroken: (c: Connection) => void,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (d: Buffer) => this.read(d));
    this.socket.on('error', (e) => (this.error = e.message));
    this.socket.on('close', () => this.onBroken(this));
  }

  /** Consumes complete responses: a status line, headers with content-length, the body. */
  private read(d: Buffer): void {
    this.buffer = this.buffer.length > 0 ? Buffer.concat([this.buffer, d]) : d;
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const head = this.buffer.subarray(0, headEnd).toString('latin1');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!length) {
        this.socket.destroy(new Error(`a response without content-length: ${head.split('\r\n')[0]}`));
        return;
      }
      const total = headEnd + 4 + Number(length[1]);
      if (this.buffer.length < total) return;
      this.buffer = this.buffer.subarray(total);
      this.onResponse(this, head.slice(0, head.indexOf('\r\n')));
    }
  }
}

/** The p-th percentile of `n` samples of which `sorted` are known and the rest never came (Infinity). */
function percentile(sorted: Float64Array, p: number, n = sorted.length): number {
  if (n === 0) return NaN;
  const i = Math.min(n - 1, Math.floor((n * p) / 100));
  return i < sorted.length ? (sorted[i] as number) : Infinity;
}

const nowNs = (): number => Number(process.hrtime.bigint());

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  loopbackAddress(o.host); // loopback only (127.0.0.0/8)
  const lines = [`GET ${o.path} HTTP/1.1`, `host: ${o.host}:${o.port}`, 'user-agent: steadfast-bench'];
  for (const [k, v] of Object.entries(o.headers ?? {})) lines.push(`${k}: ${v}`);
  const request = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const intervalNs = 1e9 / o.rate;
  const warmupCount = Math.floor((o.rate * o.warmupMs) / 1000);
  const total = warmupCount + Math.floor((o.rate * o.durationMs) / 1000);

  const latency = new Float64Array(total);
  const service = new Float64Array(total);
  const fromDue = new Float64Array(total);
  const lag = new Float64Array(total);
  let recorded = 0;
  let errors = 0;
  let firstError: string | undefined;
  let answered = 0;
  const idle: Connection[] = [];
  const queue: Pending[] = [];

  const send = (c: Connection, p: Pending): void => {
    p.sentNs = nowNs();
    c.inFlight = p;
    c.socket.write(request);
  };
  const onResponse = (c: Connection, status: string): void => {
    const ok = status.startsWith('HTTP/1.1 2');
    if (!ok) firstError ??= status;
    const p = c.inFlight;
    c.inFlight = undefined;
    if (!p) return;
    answered++;
    const t = nowNs();
    if (p.measured) {
      if (!ok) errors++;
      latency[recorded] = (t - (p.queued ? p.dueNs : p.sentNs)) / 1000;
      service[recorded] = (t - p.sentNs) / 1000;
      fromDue[recorded] = (t - p.dueNs) / 1000;
      lag[recorded] = (p.sentNs - p.dueNs) / 1000;
      recorded++;
    }
    const next = queue.shift();
    if (next) send(c, next);
    else idle.push(c);
  };
  const onBroken = (c: Connection): void => {
    const i = idle.indexOf(c);
    if (i !== -1) idle.splice(i, 1);
    firstError ??= c.error;
    if (c.inFlight) {
      answered++;
      if (c.inFlight.measured) errors++;
      c.inFlight = undefined;
    }
  };

  const connections = Array.from(
    { length: o.connections },
    () => new Connection(o.host, o.port, onResponse, onBroken),
  );
  await Promise.all(
    connections.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          c.socket.once('connect', () => resolve());
          c.socket.once('error', reject);
        }),
    ),
  );
  idle.push(...connections);

  const start = nowNs() + 1e6;
  let issued = 0;
  await new Promise<void>((resolve) => {
    const turn = (): void => {
      const t = nowNs();
      while (issued < total && start + issued * intervalNs <= t) {
        if (issued === warmupCount) o.onMeasureStart?.();
        const p: Pending = {
          dueNs: start + issued * intervalNs,
          sentNs: 0,
          measured: issued >= warmupCount,
          queued: false,
        };
        issued++;
        const c = idle.pop();
        if (c) send(c, p);
        else {
          p.queued = true;
          queue.push(p);
        }
      }
      // Done when every request is answered, or 2 s after the last one was due.
      const lastDue = start + (total - 1) * intervalNs;
      if ((issued === total && answered >= total) || t > lastDue + 2e9) {
        o.onMeasureEnd?.();
        resolve();
        return;
      }
      // Sleep until the next request falls due (Node's timers wake after at least 1 ms).
      const nextDue = issued < total ? start + issued * intervalNs : t + 10e6;
      setTimeout(turn, Math.max(0, Math.floor((nextDue - t) / 1e6)));
    };
    setTimeout(turn, 0);
  });
  for (const c of connections) c.socket.destroy();

  const measuredDue = total - warmupCount;
  const sortedLatency = latency.slice(0, recorded).sort();
  const sortedService = service.slice(0, recorded).sort();
  const sortedLag = lag.slice(0, recorded).sort();
  const sortedFromDue = fromDue.slice(0, recorded).sort();
  // A request never answered counts as an error and as slower than every answered one.
  return {
    rate: o.rate,
    completed: recorded,
    due: measuredDue,
    errors: errors + (measuredDue - recorded),
    ...(firstError === undefined ? {} : { firstError }),
    p50Us: percentile(sortedLatency, 50, measuredDue),
    p90Us: percentile(sortedLatency, 90, measuredDue),
    p99Us: percentile(sortedLatency, 99, measuredDue),
    maxUs: percentile(sortedLatency, 100, measuredDue),
    serviceP50Us: percentile(sortedService, 50),
    serviceP99Us: percentile(sortedService, 99),
    fromDueP50Us: percentile(sortedFromDue, 50, measuredDue),
    fromDueP99Us: percentile(sortedFromDue, 99, measuredDue),
    sendLagP99Us: percentile(sortedLag, 99),
  };
}
