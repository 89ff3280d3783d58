// Writes the status steadfast computes back to the API server, as a controller must: only on
// objects it owns — GatewayClasses naming its controller, Gateways of those classes, and on
// routes and policies only the entries for those Gateways (other controllers' entries are
// kept as they are) — with each condition's lastTransitionTime kept while its status holds,
// observedGeneration set, and a write retried on a conflict with the object read again.
import { CONTROLLER_NAME } from '../../translate/status.js';
import type { Condition, ObjectStatus, ObjectStatusBody } from '../../translate/status.js';
import { KubeApiError, type KubeClient, NotSent } from './client.js';
import { WATCHED_KINDS, type WatchedKind, objectPath } from './kinds.js';
import type { WriteGate } from './lease.js';
import type { KubeObject } from './reflector.js';

type Json = Record<string, unknown>;

interface LiveCondition {
  readonly type?: string;
  readonly status?: string;
  readonly lastTransitionTime?: string;
}

/** Conditions as the API stores them: each with lastTransitionTime (kept while status is unchanged) and observedGeneration. */
export function stampConditions(
  desired: readonly Condition[],
  live: readonly LiveCondition[] | undefined,
  generation: number | undefined,
  now: string,
): Json[] {
  return desired.map((c) => {
    const before = live?.find((l) => l.type === c.type);
    const observedGeneration = c.observedGeneration ?? generation;
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      // The API caps a message at 32768 characters.
      message: c.message.length > 32_768 ? `${c.message.slice(0, 32_765)}...` : c.message,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
      lastTransitionTime:
        before?.status === c.status && typeof before.lastTransitionTime === 'string'
          ? before.lastTransitionTime
          : now,
    };
  });
}

function sameRef(a: unknown, b: unknown): boolean {
  const x = (a ?? {}) as Json;
  const y = (b ?? {}) as Json;
  const norm = (r: Json) =>
    JSON.stringify([
      r.group ?? 'gateway.networking.k8s.io',
      r.kind ?? 'Gateway',
      r.namespace ?? '',
      r.name,
      r.sectionName ?? '',
      r.port ?? '',
    ]);
  return norm(x) === norm(y);
}

export interface Ownership {
  /** The Gateway namespace/name is of a class whose controllerName is steadfast's. */
  ownsGateway(namespace: string, name: string): boolean;
}

/**
 * The status `live` should have, or undefined when it has it already. `which` is where the
 * kind's status goes; `desired` what the compiler computed for it (undefined: nothing of ours).
 * Long on purpose: the two shapes of status (conditions and listeners; entries per parent or
 * ancestor) end in the same comparison with what the object holds.
 */
export function statusFor(
  which: NonNullable<WatchedKind['status']>,
  live: KubeObject,
  desired: ObjectStatusBody | undefined,
  owns: Ownership,
  now: string,
): Json | undefined {
  const current = (live.status ?? {}) as Json;
  const generation = (live.metadata as { generation?: number } | undefined)?.generation;
  let next: Json;
  if (which === 'gatewayclass' || which === 'gateway') {
    if (!desired) return undefined;
    const liveConditions = current.conditions as LiveCondition[] | undefined;
    next = {
      ...current,
      conditions: stampConditions(desired.conditions ?? [], liveConditions, generation, now),
    };
    if (which === 'gateway') {
      const liveListeners = (current.listeners ?? []) as { name?: string; conditions?: LiveCondition[] }[];
      next.listeners = (desired.listeners ?? []).map((l) => ({
        name: l.name,
        supportedKinds: l.supportedKinds,
        attachedRoutes: l.attachedRoutes,
        conditions: stampConditions(
          l.conditions,
          liveListeners.find((x) => x.name === l.name)?.conditions,
          generation,
          now,
        ),
      }));
    }
  } else {
    const field = which === 'route' ? 'parents' : 'ancestors';
    const refField = which === 'route' ? 'parentRef' : 'ancestorRef';
    const liveEntries = (current[field] ?? []) as Json[];
    const ours = (e: Json) => e.controllerName === CONTROLLER_NAME;
    const wanted = ((which === 'route' ? desired?.parents : desired?.ancestors) ?? []).filter((e) => {
      const ref = (e as unknown as Json)[refField] as Json;
      // Entries only for the Gateways steadfast owns: a mesh route's Service parent, or a
      // policy target outside steadfast's Gateways, is another implementation's to report.
      if ((ref.group ?? 'gateway.networking.k8s.io') !== 'gateway.networking.k8s.io') return false;
      if ((ref.kind ?? 'Gateway') !== 'Gateway') return false;
      return owns.ownsGateway(String(ref.namespace ?? live.metadata?.namespace ?? ''), String(ref.name));
    });
    const entries = wanted.map((e) => {
      const ref = (e as unknown as Json)[refField];
      const before = liveEntries.find((l) => ours(l) && sameRef(l[refField], ref));
      return {
        [refField]: ref,
        controllerName: CONTROLLER_NAME,
        conditions: stampConditions(
          e.conditions,
          before?.conditions as LiveCondition[] | undefined,
          generation,
          now,
        ),
      };
    });
    const others = liveEntries.filter((e) => !ours(e));
    // The CRDs cap the list (parents 32, ancestors 16): steadfast's entries take what is left,
    // those with a False condition first, so a problem is what stays visible.
    const room = Math.max(0, (which === 'route' ? MAX_PARENTS : MAX_ANCESTORS) - others.length);
    const kept =
      entries.length <= room
        ? entries
        : [...entries]
            .sort((a, b) => Number(hasFalse(b.conditions)) - Number(hasFalse(a.conditions)))
            .slice(0, room);
    next = { ...current, [field]: [...others, ...kept] };
    if (liveEntries.length === 0 && kept.length === 0) return undefined;
  }
  return sameStored(next, current) ? undefined : next;
}

const MAX_PARENTS = 32;
const MAX_ANCESTORS = 16;

function hasFalse(conditions: readonly Json[]): boolean {
  return conditions.some((c) => c.status === 'False');
}

/**
 * `a` and `b` would be written out as the same JSON but for the order of their keys (the API
 * server returns what it stores with its keys in its own order); a key whose value is undefined
 * counts as absent, as JSON leaves it out. Allocates nothing: after a start every owned object
 * is compared (10,000 routes: ~150 ms of CPU less than writing both out with sorted keys).
 */
function sameStored(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameStored(a[i], y[i])) return false;
    return true;
  }
  const x = a as Json;
  const y = b as Json;
  let keys = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k) || x[k] === undefined) continue;
    if (!Object.hasOwn(y, k) || !sameStored(x[k], y[k])) return false;
    keys++;
  }
  for (const k in y) if (Object.hasOwn(y, k) && y[k] !== undefined) keys--;
  return keys === 0;
}

/** The kinds whose status is written, by name: a compiler's status key starts with it. */
const STATUS_KINDS = new Map(WATCHED_KINDS.filter((k) => k.status).map((k) => [k.kind, k]));

const CONCURRENCY = 8;
/** Objects found in step checked per turn of the event loop (a few µs each). */
const SKIPS_PER_TURN = 500;
/** Objects whose status is computed and compared per turn (~20-30 µs each). */
const CHECKS_PER_TURN = 100;
const CONFLICT_RETRIES = 5;

/** A replica that writes alone (no Lease): it always may. */
export const ALWAYS_WRITES: WriteGate = { holds: () => true, remainingMs: () => 30_000 };

/**
 * Keeps the status of every object steadfast owns as the last compile computed it. Writes
 * after each report, and again when an object's status is changed by someone else; only
 * while `gate` says this replica holds the Lease, checked before every write.
 */
export class StatusWriter {
  /** Undefined until the first generation: before it, nothing is known, so nothing is written. */
  private desired: ReadonlyMap<string, ObjectStatus> | undefined;
  /** Objects whose status may need writing: key → kind. */
  private readonly pending = new Map<string, WatchedKind>();
  /** The resourceVersion our last write produced, per object: its echo from the watch is not a change. */
  private readonly written = new Map<string, string>();
  /**
   * Per object, the resourceVersion and the desired status it was last found in step at: a status
   * the compiler left as it was is the same object in the next generation (snapshot-compiler.ts
   * parseStatuses), so one comparison tells that it was computed the same again (a status made
   * again with the same content is only checked once more).
   */
  private readonly inStepAt = new Map<string, { rv: string; desired: ObjectStatusBody | undefined }>();
  private running = 0;
  private failures = 0;
  /** Objects whose write failed, tried again after a back-off: key → kind. */
  private readonly retry = new Map<string, WatchedKind>();
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Writes done, for tests and /metrics-style logs. */
  writes = 0;
  /** Said once per leadership: the first generation's statuses are all checked (and written where they differed). */
  private caughtUp = false;
  /** Writes sent and not answered yet: close() waits for them. */
  private readonly inFlight = new Set<Promise<void>>();

  /** Objects waiting to be checked, written or tried again, and writes in flight. */
  get backlog(): number {
    return this.pending.size + this.retry.size + this.running;
  }

  constructor(
    private readonly client: KubeClient,
    private readonly live: (kind: WatchedKind, namespace: string, name: string) => KubeObject | undefined,
    private readonly owns: Ownership,
    private readonly log: (line: string) => void,
    private readonly gate: WriteGate = ALWAYS_WRITES,
    /** The time a condition that changes is stamped with. */
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /**
   * This replica just took the Lease: every object is checked again, as the status the last
   * holder wrote may be older than what this replica computed.
   */
  lead(all: Iterable<[WatchedKind, KubeObject]>): void {
    this.caughtUp = false;
    if (!this.desired) return;
    for (const [kind, o] of all) this.queue(kind, o, false);
    this.pump();
  }

  /**
   * Leadership lost: what was waiting is dropped, and what was found in step (its records hold
   * the desired statuses of their generation, which a follower would keep alive); lead() checks
   * everything again.
   */
  follow(): void {
    this.pending.clear();
    this.retry.clear();
    this.inStepAt.clear();
  }

  /**
   * A new generation's statuses. The first checks every owned object (`all`, read only then);
   * later ones only the objects whose computed status changed: the watch queues every object
   * changed on the API server (touched), a failed write is tried again on its own, and a new
   * holder of the Lease checks everything (lead), so nothing else can have moved.
   */
  report(objects: ReadonlyMap<string, ObjectStatus>, all: Iterable<[WatchedKind, KubeObject]>): void {
    const before = this.desired;
    this.desired = objects;
    // All queued first, then one pump: it checks a bounded number per turn of the event loop.
    if (before) this.queueChanged(before, objects);
    else for (const [kind, o] of all) this.queue(kind, o, false);
    this.pump();
  }

  /**
   * Objects whose computed status is new, changed or gone. A status whose text the compiler left
   * as it was is the same object in the next generation (pipeline/snapshot-compiler.ts
   * parseStatuses): one lookup each, not a check.
   */
  private queueChanged(
    before: ReadonlyMap<string, ObjectStatus>,
    after: ReadonlyMap<string, ObjectStatus>,
  ): void {
    for (const [key, s] of after) if (before.get(key) !== s) this.queueKey(key);
    for (const key of before.keys()) if (!after.has(key)) this.queueKey(key);
  }

  /** Queues the object a compiler key names (translate/status.ts objectKey), if it has status we write. */
  private queueKey(key: string): void {
    const [kindName = '', namespace = '', name = ''] = key.split('/');
    const kind = STATUS_KINDS.get(kindName);
    if (kind) this.pending.set(statusKey(kind, namespace, name), kind);
  }

  /** An object changed on the API server (maybe its status, maybe by us). */
  touched(kind: WatchedKind, o: KubeObject): void {
    if (!kind.status) return;
    const key = liveKey(kind, o);
    if (this.written.get(key) === o.metadata?.resourceVersion) return;
    this.queue(kind, o);
  }

  /**
   * The object is at the resourceVersion one of this writer's writes gave it (its watch echo). A
   * write to /status succeeds only on the version it read, so it changed nothing but the status.
   */
  wrote(kind: WatchedKind, o: KubeObject): boolean {
    const rv = o.metadata?.resourceVersion;
    return rv !== undefined && this.written.get(liveKey(kind, o)) === rv;
  }

  /** An object was deleted: nothing to write, nothing to remember. */
  forget(kind: WatchedKind, o: KubeObject): void {
    const key = liveKey(kind, o);
    this.written.delete(key);
    this.inStepAt.delete(key);
    this.pending.delete(key);
    this.retry.delete(key);
  }

  /** Stops writing; resolves once no write is in flight (the Lease may be released then). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.pending.clear();
    this.retry.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private queue(kind: WatchedKind, o: KubeObject, pump = true): void {
    // Before the first compile an empty desired status would strip steadfast's entries from
    // every route, only to write them again with new transition times.
    if (!kind.status || !this.desired) return;
    this.pending.set(liveKey(kind, o), kind);
    if (pump) this.pump();
  }

  private pump(): void {
    if (!this.gate.holds()) {
      this.follow();
      return;
    }
    let [skipped, checked] = [0, 0];
    while (!this.closed && this.running < CONCURRENCY && this.pending.size > 0) {
      const [key, kind] = this.pending.entries().next().value as [string, WatchedKind];
      this.pending.delete(key);
      // Checked here, at once: only a write goes through the event loop (an object found in
      // step was a promise and a turn of its own, 10,000 of them after a start).
      const inStep = this.inStep(kind, key);
      if (inStep) skipped++;
      else checked++;
      const write = inStep ? undefined : this.check(kind, key);
      if (write) this.start(kind, key, write);
      else if (skipped >= SKIPS_PER_TURN || checked >= CHECKS_PER_TURN) {
        // The rest on a later turn of the event loop: ext_proc answers share this thread.
        setImmediate(() => this.pump());
        break;
      }
    }
    if (
      !this.caughtUp &&
      this.desired &&
      this.running === 0 &&
      this.pending.size === 0 &&
      this.retry.size === 0
    ) {
      // After a start the operator (and a test) can tell when status is current again.
      this.caughtUp = true;
      this.log(`status: every object steadfast owns is checked (${this.writes} written)`);
    }
  }

  /**
   * The object is at the resourceVersion it had when last found as computed, and the compiler
   * computed the same again: nothing to check (a generation leaves most objects so).
   */
  private inStep(kind: WatchedKind, key: string): boolean {
    const was = this.inStepAt.get(key);
    if (!was) return false;
    const [, namespace = '', name = ''] = key.split('/');
    if (this.live(kind, namespace, name)?.metadata?.resourceVersion !== was.rv) return false;
    return this.desired?.get(statusKey(kind, namespace, name))?.status === was.desired;
  }

  /**
   * The object as the API server holds it, with the status to write, or undefined when there is
   * nothing to write (found in step, and recorded so; gone; or not steadfast's). A check that
   * throws (a status it cannot read) fails as a write does.
   */
  private check(kind: WatchedKind, key: string): Pending | undefined {
    const [, namespace = '', name = ''] = key.split('/');
    const live = this.live(kind, namespace, name);
    try {
      const write = live && this.decide(kind, key, live);
      // Checked and nothing to write (gone, another's, in step): as a write that succeeds, it
      // ends a run of failures, so the next one is said and waits the shortest back-off.
      if (!write) this.failures = 0;
      return write;
    } catch (e) {
      this.failed(kind, key, e);
      return undefined;
    }
  }

  /** What `live` should be written with (see check). */
  private decide(kind: WatchedKind, key: string, live: KubeObject): Pending | undefined {
    const [, namespace = '', name = ''] = key.split('/');
    if (kind.status === 'gatewayclass' && (live.spec as Json | undefined)?.controllerName !== CONTROLLER_NAME)
      return undefined;
    if (kind.status === 'gateway' && !this.owns.ownsGateway(namespace, name)) return undefined;
    const desired = this.desired?.get(statusKey(kind, namespace, name))?.status;
    const which = kind.status as NonNullable<WatchedKind['status']>;
    const status = statusFor(which, live, desired, this.owns, this.now());
    if (status) return { live, status, desired };
    this.inStepAt.set(key, { rv: live.metadata?.resourceVersion ?? '', desired });
    return undefined;
  }

  /** A check or a write failed: said (now and then), and tried again after a back-off. */
  private failed(kind: WatchedKind, key: string, e: unknown): void {
    this.failures++;
    if (this.failures === 1 || this.failures % 50 === 0)
      this.log(
        `status of ${kind.kind} ${key.split('/').slice(1).join('/')} not written: ${(e as Error).message}; trying again`,
      );
    // Its echo must not be taken for ours, and it is tried again after a back-off.
    this.written.delete(key);
    this.inStepAt.delete(key);
    this.retryLater(key, kind);
  }

  /** One write in flight; pump() starts the next when it is done. */
  private start(kind: WatchedKind, key: string, first: Pending): void {
    this.running++;
    const write = this.write(kind, key, first);
    this.inFlight.add(write);
    void write
      .then(
        () => {
          this.failures = 0;
        },
        (e: unknown) => this.failed(kind, key, e),
      )
      .finally(() => {
        this.inFlight.delete(write);
        this.running--;
        // Through the event loop, not straight on: an object whose status is already right
        // resolves at once, and 10,000 of them in one run of microtasks would hold back the
        // ext_proc answers this thread also serves.
        setImmediate(() => this.pump());
      });
  }

  private retryLater(key: string, kind: WatchedKind): void {
    if (this.closed) return;
    this.retry.set(key, kind);
    if (this.retryTimer) return;
    const ms = Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      for (const [k, kd] of this.retry) this.pending.set(k, kd);
      this.retry.clear();
      this.pump();
    }, ms);
    this.retryTimer.unref();
  }

  /** Writes `first`; on a conflict reads the object again and writes what it needs then. */
  private async write(kind: WatchedKind, key: string, first: Pending): Promise<void> {
    const [, namespace = '', name = ''] = key.split('/');
    let next: Pending | undefined = first;
    for (let attempt = 0; next && attempt < CONFLICT_RETRIES; attempt++) {
      const { live, status } = next;
      if (this.closed || !this.gate.holds()) return;
      const path = `${objectPath(kind, kind.namespaced ? namespace : undefined, name)}/status`;
      try {
        // Asked again once the rate limit lets the write go: a replica past its renew deadline
        // never writes, and the request may not outlast the deadline either.
        const saved = await this.client.call<KubeObject>('PUT', path, { ...live, status }, () =>
          this.closed || !this.gate.holds() ? 0 : this.gate.remainingMs(),
        );
        this.writes++;
        const rv = saved.metadata?.resourceVersion;
        if (rv) this.written.set(key, rv);
        if (rv) this.inStepAt.set(key, { rv, desired: next.desired });
        return;
      } catch (e) {
        // Not sent (the Lease is lost or the writer closed while it waited) or the object is gone.
        if (e instanceof NotSent || (e instanceof KubeApiError && e.status === 404)) return;
        if (!(e instanceof KubeApiError) || e.status !== 409) throw e;
        // Someone wrote first: read the object again and merge into what it is now.
        const read = await this.client.call<KubeObject>(
          'GET',
          objectPath(kind, kind.namespaced ? namespace : undefined, name),
        );
        next = this.decide(kind, key, { ...read, apiVersion: kind.apiVersion, kind: kind.kind });
      }
    }
    if (next) throw new Error(`${CONFLICT_RETRIES} conflicting writes in a row`);
  }
}

/** A status to write: the object as last read, the status it should have, and what it was computed from. */
interface Pending {
  readonly live: KubeObject;
  readonly status: Json;
  readonly desired: ObjectStatusBody | undefined;
}

/** The writer's key: kind/namespace/name (namespace empty for cluster-scoped kinds). */
function liveKey(kind: WatchedKind, o: KubeObject): string {
  return statusKey(kind, o.metadata?.namespace ?? '', o.metadata?.name ?? '');
}

/** The compiler's key for an object's status (translate/status.ts objectKey). */
function statusKey(kind: WatchedKind, namespace: string, name: string): string {
  return `${kind.kind}/${kind.namespaced ? namespace : ''}/${name}`;
}
