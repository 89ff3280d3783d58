// Leader election on a coordination.k8s.io/v1 Lease, so that of several replicas one writes
// status. Every retry period each replica reads the Lease: the holder renews it, the others
// take it once it has not changed for its duration (timed on their own monotonic clock, as
// client-go does, so clock skew between machines does not matter). The holder's right to
// write ends a renew deadline after the start of its last successful renewal, which is shorter
// than the duration the others wait: the old holder has stopped before a new one can start.
import { performance } from 'node:perf_hooks';
import type { StatusLeadership } from '../provider.js';
import { KubeApiError, type KubeClient } from './client.js';

export interface LeaseSettings {
  readonly namespace: string;
  readonly name: string;
  /** Written as spec.holderIdentity: who writes, as `kubectl get lease` shows it. */
  readonly identity: string;
  /** How long the others wait for a Lease that does not change before they take it. */
  readonly durationMs: number;
  /** How long the holder may go without a successful renewal before it stops writing. */
  readonly renewDeadlineMs: number;
  /** How often every replica reads (and the holder renews) the Lease. */
  readonly retryPeriodMs: number;
}

/** What a status write asks before it is sent. */
export interface WriteGate {
  /** This replica holds the Lease and its renew deadline has not passed. */
  holds(): boolean;
  /** Milliseconds left before the renew deadline (0 when it does not hold). */
  remainingMs(): number;
}

/** The Lease as /readyz and /metrics show it (the provider adds its counts of writes). */
export type LeaseView = Omit<StatusLeadership, 'statusWrites' | 'statusPending'>;

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** The API's MicroTime: RFC 3339 with six fractional digits. */
function microTime(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaseElector implements WriteGate {
  private leading = false;
  /** Monotonic time the last successful renewal (or acquisition) started. */
  private renewedAt = 0;
  private leadingSince: string | null = null;
  private holder: string | null = null;
  /** The holder's record as last read, and when (monotonic) it last changed: its expiry counts from then. */
  private observed = '';
  private observedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly path: string;
  private failures = 0;
  /** Why the last try failed, while it keeps failing: /readyz says so. */
  private failing: string | null = null;

  constructor(
    private readonly client: KubeClient,
    private readonly settings: LeaseSettings,
    /** Told each change of leadership; `false` comes before the renew deadline ends. */
    private readonly onChange: (leading: boolean) => void,
    private readonly log: (line: string) => void,
  ) {
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(settings.namespace)}/leases`;
  }

  get description(): string {
    return `lease ${this.settings.namespace}/${this.settings.name}`;
  }

  /** Starts trying at once, then every retry period. */
  start(): void {
    this.schedule(0);
  }

  holds(): boolean {
    return this.remainingMs() > 0;
  }

  remainingMs(): number {
    if (!this.leading) return 0;
    return Math.max(0, this.renewedAt + this.settings.renewDeadlineMs - performance.now());
  }

  view(): LeaseView {
    return {
      lease: `${this.settings.namespace}/${this.settings.name}`,
      identity: this.settings.identity,
      leading: this.holds(),
      holder: this.holder,
      leadingSince: this.holds() ? this.leadingSince : null,
      ...(this.failing !== null && !this.holds() ? { problem: `cannot elect: ${this.failing}` } : {}),
    };
  }

  /**
   * Stops trying; a holder gives the Lease up (so another replica need not wait out its
   * duration). Call it only once nothing writes any more.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // A renewal still in flight is not waited for: it changes nothing once stopped, and were it
    // to land after the release, the resourceVersion it was read with makes the server refuse it.
    const held = this.holds();
    this.lose('stopping');
    if (held) await this.release();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.tick().finally(() => {
        // Candidates spread their tries a little, as client-go does, so they do not all ask at once.
        const jitter = this.leading ? 0 : Math.random() * 0.2 * this.settings.retryPeriodMs;
        this.schedule(this.settings.retryPeriodMs + jitter);
      });
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const started = performance.now();
    try {
      const took = await this.tryAcquireOrRenew();
      this.failures = 0;
      this.failing = null;
      if (took) this.renewed(started);
      else if (this.leading) this.lose(`${this.holder ?? 'another replica'} holds it now`);
    } catch (e) {
      this.failures++;
      const reason = this.failureReason(e);
      // A holder keeps trying until its renew deadline; the expiry timer ends its writing.
      if (reason !== this.failing || this.failures % 30 === 0)
        this.log(`${this.description}: cannot read, create or renew it: ${reason}`);
      this.failing = reason;
    }
  }

  /** The error, and for a refusal (403) or a missing namespace (404) what to change: neither heals alone. */
  private failureReason(e: unknown): string {
    const message = (e as Error).message;
    if (!(e instanceof KubeApiError) || (e.status !== 403 && e.status !== 404)) return message;
    const { namespace, name } = this.settings;
    const fix =
      e.status === 403
        ? `this service account may not use Leases in namespace ${namespace}: bind it the Role of deploy/kubernetes/rbac.yaml there (get and update on Lease ${name}, create on Leases)`
        : `the Lease cannot be made in namespace ${namespace}: create the namespace if it is missing`;
    return `${message} (HTTP ${e.status}); ${fix}, or name another with --lease-namespace/--lease-name; this replica writes no status until it holds the Lease`;
  }

  /** True when this replica holds the Lease after the try. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const timeout = this.settings.renewDeadlineMs;
    const res = await this.client.send<LeaseObject>(
      'GET',
      `${this.path}/${encodeURIComponent(this.settings.name)}`,
      undefined,
      timeout,
    );
    if (res.status === 404) return this.create(timeout);
    if (res.status >= 400) throw new KubeApiError(res.status, String(res.status), leaseError(res.body));
    const lease = res.body;
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity || null;
    const record = JSON.stringify([holder, spec.renewTime, spec.leaseDurationSeconds]);
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = performance.now();
    }
    this.holder = holder;
    const me = this.settings.identity;
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder !== null && holder !== me && performance.now() < this.observedAt + durationMs) return false;
    const now = microTime();
    const next: LeaseObject = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: me,
        leaseDurationSeconds: Math.round(this.settings.durationMs / 1000),
        renewTime: now,
        acquireTime: holder === me ? (spec.acquireTime ?? now) : now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === me || holder === null ? 0 : 1),
      },
    };
    // The resourceVersion read makes this a compare-and-swap: of two candidates one wins (409 for the other).
    const put = await this.client.send<LeaseObject>(
      'PUT',
      `${this.path}/${encodeURIComponent(this.settings.name)}`,
      next,
      timeout,
    );
    if (put.status === 409) return false;
    if (put.status >= 400) throw new KubeApiError(put.status, String(put.status), leaseError(put.body));
    this.holder = me;
    return true;
  }

  private async create(timeout: number): Promise<boolean> {
    const now = microTime();
    const lease: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.settings.name, namespace: this.settings.namespace },
      spec: {
        holderIdentity: this.settings.identity,
        leaseDurationSeconds: Math.round(this.settings.durationMs / 1000),
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    };
    const res = await this.client.send<LeaseObject>('POST', this.path, lease, timeout);
    if (res.status === 409) return false;
    if (res.status >= 400) throw new KubeApiError(res.status, String(res.status), leaseError(res.body));
    this.holder = this.settings.identity;
    return true;
  }

  /** A successful renewal that started at `started` (monotonic): valid a renew deadline from then. */
  private renewed(started: number): void {
    if (this.stopped) return;
    const wasLeading = this.holds();
    this.leading = true;
    this.renewedAt = Math.max(this.renewedAt, started);
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = setTimeout(() => {
      // The deadline itself, not this timer's (maybe late) run: holds() has said no since then.
      const deadline = Date.now() - (performance.now() - (this.renewedAt + this.settings.renewDeadlineMs));
      this.lose(`not renewed within the renew deadline (${this.settings.renewDeadlineMs} ms)`, deadline);
    }, this.remainingMs());
    this.expiry.unref();
    if (!wasLeading) {
      this.leadingSince = new Date(Date.now() - (performance.now() - started)).toISOString();
      this.log(
        `${this.description}: ${this.settings.identity} holds it since ${this.leadingSince}; this replica writes status`,
      );
      this.onChange(true);
    }
  }

  /** Leadership ends; `at` (epoch ms) is when this replica stopped writing, for the log. */
  private lose(why: string, at = Date.now()): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = undefined;
    if (!this.leading) return;
    this.leading = false;
    this.leadingSince = null;
    this.onChange(false);
    this.log(
      `${this.description}: ${this.settings.identity} stopped writing status at ${new Date(at).toISOString()}: ${why}`,
    );
  }

  /** Hands the Lease back: no holder, so the next candidate takes it at its next try. */
  private async release(): Promise<void> {
    try {
      const name = encodeURIComponent(this.settings.name);
      const lease = await this.client.call<LeaseObject>('GET', `${this.path}/${name}`, undefined, 2000);
      if (lease.spec?.holderIdentity !== this.settings.identity) return;
      const now = microTime();
      await this.client.call(
        'PUT',
        `${this.path}/${name}`,
        { ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: now } },
        2000,
      );
      this.log(`${this.description}: released`);
    } catch (e) {
      this.log(
        `${this.description}: not released (${(e as Error).message}); another replica takes it once it expires`,
      );
    }
  }
}

function leaseError(body: unknown): string {
  const b = (typeof body === 'object' && body !== null ? body : {}) as {
    reason?: unknown;
    message?: unknown;
  };
  return `lease: ${typeof b.reason === 'string' ? `${b.reason}: ` : ''}${typeof b.message === 'string' ? b.message : 'no message'}`;
}
