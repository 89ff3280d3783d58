// A fake API server for the status writer's tests: it keeps the objects, takes a status PUT only
// at the object's current resourceVersion (409 otherwise, as the real one), keeps the spec of
// what it stores whatever the PUT carries, and hands every change back later, through the event
// loop, as a watch does: to the cache the writer reads, then to touched() or forget().
import { vi } from 'vitest';
import { KubeApiError, type KubeClient, NotSent } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS, type WatchedKind } from '../../extproc/src/provider/kubernetes/kinds.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';
import { StatusWriter } from '../../extproc/src/provider/kubernetes/status-writer.js';

export const ROUTE = WATCHED_KINDS.find((k) => k.kind === 'HTTPRoute') as WatchedKind;
export const GATEWAY = WATCHED_KINDS.find((k) => k.kind === 'Gateway') as WatchedKind;

/** The writer's and the compiler's key of an object: kind/namespace/name. */
export const keyOf = (kind: WatchedKind, namespace: string, name: string): string =>
  `${kind.kind}/${kind.namespaced ? namespace : ''}/${name}`;

const clone = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

/** The object key a request path names (…/namespaces/NS/PLURAL/NAME[/status]). */
function pathKey(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts.at(-1) === 'status') parts.pop();
  const name = parts.pop() ?? '';
  const plural = parts.pop() ?? '';
  const kind = WATCHED_KINDS.find((k) => k.plural === plural);
  if (!kind) throw new Error(`no kind for ${path}`);
  return keyOf(kind, parts[parts.indexOf('namespaces') + 1] ?? '', name);
}

type Event = { kind: WatchedKind; deleted: boolean; object: KubeObject };

export class StatusCluster {
  private rv = 0;
  /** What the API server holds, by key. */
  readonly store = new Map<string, KubeObject>();
  /** What the watch has delivered (the reflector's cache), by key. */
  private readonly cache = new Map<string, KubeObject>();
  private readonly events: Event[] = [];
  /** Status PUTs the server took. */
  puts = 0;
  /** Objects the writer looked up in the cache. */
  lookups = 0;
  readonly gate = { holds: true };
  /** Per key, what its next PUT meets: someone else writes just before it (a 409), or a 500. */
  readonly traps = new Map<string, 'conflict' | 'fail'>();
  readonly writer: StatusWriter;
  /** The time the writer stamps a changed condition with: each step's own, so that a write a retry
   * made later stamps the same as one made at once. */
  now = new Date('2026-11-27T04:00:00Z');

  constructor(owns: (namespace: string, name: string) => boolean) {
    const client = {
      server: 'https://fake',
      call: (method: string, path: string, body?: KubeObject, timeout?: number | (() => number)) =>
        this.call(method, path, body, timeout),
    } as unknown as KubeClient;
    this.writer = new StatusWriter(
      client,
      (kind, namespace, name) => {
        this.lookups++;
        return this.cache.get(keyOf(kind, namespace, name));
      },
      { ownsGateway: owns },
      () => {},
      { holds: () => this.gate.holds, remainingMs: () => (this.gate.holds ? 10_000 : 0) },
      () => this.now.toISOString(),
    );
  }

  /** Every object the watch delivered, as the provider hands them to lead() and a first report(). */
  all(): [WatchedKind, KubeObject][] {
    return [...this.cache].map(([key, o]) => [key.startsWith('Gateway/') ? GATEWAY : ROUTE, o]);
  }

  /** Someone creates or changes an object (its status, its spec): a new resourceVersion, a watch event. */
  put(kind: WatchedKind, object: KubeObject): void {
    const key = keyOf(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
    const stored = {
      ...clone(object),
      metadata: { ...clone(object.metadata), resourceVersion: String(++this.rv) },
    };
    this.store.set(key, stored);
    this.emit({ kind, deleted: false, object: stored });
  }

  remove(kind: WatchedKind, key: string): void {
    const object = this.store.get(key);
    if (!object) return;
    this.store.delete(key);
    this.emit({ kind, deleted: true, object });
  }

  /** Until nothing waits: events delivered, the writer's queue, writes and retries done (a retry's back-off passes on the fake timers). */
  async settle(): Promise<void> {
    for (let turns = 0; this.events.length > 0 || this.writer.backlog > 0; turns++) {
      if (turns > 100_000) throw new Error('the status writer never settles');
      await new Promise((r) => setImmediate(r));
      if (this.events.length === 0 && this.writer.backlog > 0 && turns % 20 === 19) {
        vi.advanceTimersByTime(30_000);
      }
    }
  }

  private emit(event: Event): void {
    this.events.push(event);
    if (this.events.length === 1) setImmediate(() => this.deliver());
  }

  private deliver(): void {
    for (const e of this.events.splice(0)) {
      const key = keyOf(e.kind, e.object.metadata?.namespace ?? '', e.object.metadata?.name ?? '');
      if (e.deleted) {
        this.cache.delete(key);
        this.writer.forget(e.kind, e.object);
      } else {
        this.cache.set(key, clone(e.object));
        this.writer.touched(e.kind, clone(e.object));
      }
    }
  }

  private async call(
    method: string,
    path: string,
    body: KubeObject | undefined,
    timeout: number | (() => number) | undefined,
  ): Promise<KubeObject> {
    await Promise.resolve();
    if (typeof timeout === 'function' && timeout() <= 0) throw new NotSent(`${method} ${path}: not sent`);
    const key = pathKey(path);
    if (method === 'PUT') this.spring(key);
    const stored = this.store.get(key);
    if (!stored) throw new KubeApiError(404, 'NotFound', `${key} not found`);
    if (method === 'GET') return clone(stored);
    if (method !== 'PUT' || !body) throw new Error(`unexpected ${method} ${path}`);
    if (body.metadata?.resourceVersion !== stored.metadata?.resourceVersion)
      throw new KubeApiError(409, 'Conflict', `${key} was modified`);
    this.puts++;
    const kind = key.startsWith('Gateway/') ? GATEWAY : ROUTE;
    this.put(kind, { ...stored, status: clone(body.status) });
    return clone(this.store.get(key) as KubeObject);
  }

  /** A trap set on the key goes off before its PUT is looked at. */
  private spring(key: string): void {
    const trap = this.traps.get(key);
    this.traps.delete(key);
    if (trap === 'fail') throw new KubeApiError(500, 'InternalError', 'the server failed');
    const stored = this.store.get(key);
    if (trap === 'conflict' && stored) {
      // Another controller writes its own entry meanwhile.
      const status = (stored.status ?? {}) as { parents?: { controllerName?: string }[] };
      const parents = (status.parents ?? []).filter((p) => p.controllerName !== OTHER_CONTROLLER);
      this.put(ROUTE, { ...stored, status: { ...status, parents: [...parents, otherEntry(this.rv)] } });
    }
  }
}

export const OTHER_CONTROLLER = 'example.com/other-controller';

/** Another controller's entry on a route, for its own Gateway. */
export function otherEntry(n: number): Record<string, unknown> {
  return {
    parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'theirs' },
    controllerName: OTHER_CONTROLLER,
    conditions: [
      {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message: `theirs ${n}`,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  };
}
