// Keeps one kind's objects in memory, in step with the API server: a list, then a watch from
// the list's resourceVersion, resumed where it left off when the server ends it, and a fresh
// list when the server has forgotten that version (410 Gone) or the connection failed. Says
// "changed" only when something the compiler reads changed: a status write, a new
// resourceVersion alone or managedFields do not recompile anything.
import { KubeApiError, type KubeClient, type WatchEvent } from './client.js';
import { type WatchedKind, listPath } from './kinds.js';

export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
};

export interface ReflectorHooks {
  /** Something the compiler reads changed: an object came, went or changed outside its status. */
  changed(what: string): void;
  /** An object's status (or anything else) changed: the status writer checks it is still ours. */
  touched?(kind: WatchedKind, object: KubeObject): void;
  log(line: string): void;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
/** How often to look again for a kind the API server does not serve (its CRD not installed). */
const ABSENT_RETRY_MS = 30_000;

export function objectKey(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name ?? ''}` : (o.metadata?.name ?? '');
}

/** The object as the compiler sees it: without status, resourceVersion and managedFields. */
function readPart(o: KubeObject | undefined): string {
  if (!o) return '';
  const { status: _status, metadata, ...rest } = o;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = metadata ?? {};
  return JSON.stringify({ ...rest, metadata: meta });
}

export class Reflector {
  readonly objects = new Map<string, KubeObject>();
  /** False while the API server does not serve this kind (an optional CRD not installed). */
  served = true;
  private resourceVersion = '';
  private stopped = false;
  private abortWatch: (() => void) | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly client: KubeClient,
    readonly kind: WatchedKind,
    private readonly hooks: ReflectorHooks,
  ) {}

  /** Lists once and starts watching. Rejects when a kind steadfast needs cannot be listed. */
  async start(): Promise<void> {
    await this.list(true);
    this.watchLoop();
  }

  stop(): void {
    this.stopped = true;
    this.abortWatch?.();
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** The first list waits out an API server that is starting (429, 5xx, refused) this long. */
  private static readonly FIRST_LIST_PATIENCE_MS = 30_000;

  private async list(first: boolean): Promise<void> {
    let body: { items?: KubeObject[]; metadata?: { resourceVersion?: string } };
    try {
      body = first ? await this.firstList() : await this.client.call('GET', listPath(this.kind));
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404 && this.kind.optional) {
        if (this.served) {
          this.hooks.log(
            `${this.kind.kind} (${this.kind.apiVersion}) is not served by the API server (its CRD is not installed); looking again every ${ABSENT_RETRY_MS / 1000} s`,
          );
        }
        this.served = false;
        this.replace([], first);
        this.resourceVersion = '';
        return;
      }
      if (first) {
        const hint =
          e instanceof KubeApiError && e.status === 403
            ? ' (the account needs get, list and watch on it: docs/kubernetes.md, "RBAC")'
            : '';
        throw new Error(
          `cannot list ${this.kind.kind} (${this.kind.apiVersion}): ${(e as Error).message}${hint}`,
        );
      }
      throw e;
    }
    if (!this.served) this.hooks.log(`${this.kind.kind} (${this.kind.apiVersion}) is served now`);
    this.served = true;
    this.replace(body.items ?? [], first);
    this.resourceVersion = body.metadata?.resourceVersion ?? '';
  }

  private async firstList(): Promise<{ items?: KubeObject[]; metadata?: { resourceVersion?: string } }> {
    const deadline = Date.now() + Reflector.FIRST_LIST_PATIENCE_MS;
    for (let wait = 200; ; wait = Math.min(wait * 2, 3000)) {
      try {
        return await this.client.call('GET', listPath(this.kind));
      } catch (e) {
        const transient = e instanceof KubeApiError ? e.status === 429 || e.status >= 500 : true;
        if (!transient || Date.now() + wait > deadline) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** Takes a full list; says changed (unless this is the first list) when it differs. */
  private replace(items: readonly KubeObject[], first: boolean): void {
    const next = new Map<string, KubeObject>();
    for (const raw of items) {
      const o = this.complete(raw);
      next.set(objectKey(o), o);
    }
    let differs = next.size !== this.objects.size;
    for (const [key, o] of next) {
      if (!differs && readPart(this.objects.get(key)) !== readPart(o)) differs = true;
    }
    this.objects.clear();
    for (const [key, o] of next) this.objects.set(key, o);
    // After the cache holds them: the status writer reads the object it is told about from it.
    for (const o of next.values()) this.hooks.touched?.(this.kind, o);
    if (differs && !first) this.hooks.changed(`${this.kind.kind} (listed again)`);
  }

  /** List items carry no apiVersion and kind; managedFields are never read and can be large. */
  private complete(raw: KubeObject): KubeObject {
    const { managedFields: _mf, ...metadata } = raw.metadata ?? {};
    return { ...raw, apiVersion: this.kind.apiVersion, kind: this.kind.kind, metadata };
  }

  private watchLoop(): void {
    if (this.stopped) return;
    if (!this.served) {
      this.retry(ABSENT_RETRY_MS, true);
      return;
    }
    let gone = false;
    const w = this.client.watch(listPath(this.kind), this.resourceVersion, (event) => {
      if (this.onEvent(event)) gone = true;
    });
    this.abortWatch = () => w.abort();
    w.done.then(
      () => {
        this.failures = 0;
        // The server ended the watch (its timeout): go on from the last version seen, unless it
        // said that version is too old.
        if (gone) this.retry(0, true);
        else this.watchLoop();
      },
      (e: unknown) => {
        if (this.stopped) return;
        const isGone = e instanceof KubeApiError && e.status === 410;
        if (!isGone) {
          this.failures++;
          if (this.failures === 1 || this.failures % 10 === 0)
            this.hooks.log(`watching ${this.kind.kind} failed (${(e as Error).message}); listing again`);
        }
        this.retry(
          isGone ? 0 : Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures, 10)),
          true,
        );
      },
    );
  }

  /** Lists again after `ms`, then watches. */
  private retry(ms: number, relist: boolean): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!relist) return this.watchLoop();
      this.list(false).then(
        () => this.watchLoop(),
        (e: unknown) => {
          this.failures++;
          if (this.failures === 1 || this.failures % 10 === 0)
            this.hooks.log(`listing ${this.kind.kind} failed (${(e as Error).message}); trying again`);
          this.retry(Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures, 10)), true);
        },
      );
    }, ms);
    this.retryTimer.unref();
  }

  /** Applies one event; true when the server says the version is gone and a list is needed. */
  private onEvent(event: WatchEvent): boolean {
    const o = event.object as KubeObject;
    if (event.type === 'ERROR') {
      const code = (event.object as { code?: number }).code;
      if (code === 410) return true;
      this.hooks.log(`watching ${this.kind.kind}: ${String((event.object as { message?: string }).message)}`);
      return true;
    }
    const rv = o.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return false;
    const obj = this.complete(o);
    const key = objectKey(obj);
    const before = this.objects.get(key);
    if (event.type === 'DELETED') {
      if (!this.objects.delete(key)) return false;
      this.hooks.changed(`${this.kind.kind} ${key} deleted`);
      return false;
    }
    this.objects.set(key, obj);
    if (readPart(before) !== readPart(obj)) {
      this.hooks.changed(`${this.kind.kind} ${key} ${before ? 'changed' : 'added'}`);
    }
    this.hooks.touched?.(this.kind, obj);
    return false;
  }
}
