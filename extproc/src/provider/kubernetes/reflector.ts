// Keeps one kind's objects in memory, in step with the API server: a list (a page of
// LIST_PAGE_SIZE objects at a time), then a watch from the list's resourceVersion. A watch the server ends, or that fails on the way, is started
// again from the last version seen; the kind is listed afresh only when the server has
// forgotten that version (410 Gone) or says something else went wrong. Says "changed" only
// when something the compiler reads changed: a status write, a new resourceVersion alone or
// managedFields compile nothing, and neither does an object the provider says is not relevant
// (a ConfigMap no policy names).
import { KubeApiError, type KubeClient, type WatchEvent } from './client.js';
import type { WatchedKind } from './kinds.js';

export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
};

export interface ReflectorHooks {
  /** Something the compiler reads changed: an object came, went or changed outside its status. */
  changed(what: string): void;
  /** An object is new or changed on the API server (maybe only its status, maybe by us). */
  touched?(kind: WatchedKind, object: KubeObject): void;
  /** An object is gone. */
  deleted?(kind: WatchedKind, object: KubeObject): void;
  /**
   * The object is at the resourceVersion a status write of this process gave it: it differs from
   * the version before only in its status, so it is not compared.
   */
  ownStatusWrite?(kind: WatchedKind, object: KubeObject): boolean;
  /** Whether the compiler reads this object now (default: every object). */
  relevant?(object: KubeObject): boolean;
  log(line: string): void;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
/** How often to look again for a kind the API server does not serve (its CRD not installed). */
const ABSENT_RETRY_MS = 30_000;
/** A watch that lasted this long (or brought events) was healthy: the back-off starts over. */
const HEALTHY_WATCH_MS = 30_000;
/** The first list waits out an API server that is starting (429, 5xx, refused) this long. */
const FIRST_LIST_PATIENCE_MS = 30_000;

type ListBody = { items?: KubeObject[]; metadata?: { resourceVersion?: string; continue?: string } };

/** Objects per page of a list: a large cluster's list is many bounded answers, not one huge one. */
export const LIST_PAGE_SIZE = 500;

export function objectKey(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name ?? ''}` : (o.metadata?.name ?? '');
}

/** `kubectl apply` keeps the whole object it applied in this annotation: a second copy of each object. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * An object's annotations without kubectl's last-applied copy (nothing reads it; a status write
 * to /status keeps the stored metadata whatever it sends); undefined when none are left.
 */
function withoutLastApplied(annotations: unknown): Record<string, unknown> | undefined {
  if (annotations === null || typeof annotations !== 'object') return undefined;
  if (!Object.hasOwn(annotations, LAST_APPLIED)) return annotations as Record<string, unknown>;
  const { [LAST_APPLIED]: _copy, ...rest } = annotations as Record<string, unknown>;
  return Object.keys(rest).length > 0 ? rest : undefined;
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
  /**
   * Per object, a version that changes only when what the compiler reads changes (a status
   * write moves resourceVersion, not this), so the compiler can reuse what it made of it.
   */
  private readonly readVersions = new Map<string, number>();
  private serial = 0;
  /** False while the API server does not serve this kind (an optional CRD not installed). */
  served = true;
  private resourceVersion = '';
  private stopped = false;
  private abortWatch: (() => void) | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Why the last list or watch failed (or ended at once), until a list succeeds or a watch is answered. */
  problem: string | undefined;

  /**
   * `path` lists the kind (in every namespace unless it names one), with a field selector
   * when the provider reads only some of its objects.
   */
  constructor(
    private readonly client: KubeClient,
    readonly kind: WatchedKind,
    private readonly path: string,
    private readonly hooks: ReflectorHooks,
  ) {}

  /**
   * Lists once and starts watching. Rejects when a kind steadfast needs cannot be listed
   * (after waiting out an API server that is starting for `patienceMs`).
   */
  async start(patienceMs = FIRST_LIST_PATIENCE_MS): Promise<void> {
    await this.list(true, patienceMs);
    this.watchLoop();
  }

  /** The object's read version (see readVersions). */
  readVersion(key: string): number | undefined {
    return this.readVersions.get(key);
  }

  stop(): void {
    this.stopped = true;
    this.abortWatch?.();
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private async list(first: boolean, patienceMs = FIRST_LIST_PATIENCE_MS): Promise<void> {
    let body: ListBody;
    try {
      body = first ? await this.firstList(patienceMs) : await this.listPages();
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
    this.problem = undefined;
    this.replace(body.items ?? [], first);
    this.resourceVersion = body.metadata?.resourceVersion ?? '';
  }

  private async firstList(patienceMs: number): Promise<ListBody> {
    const deadline = Date.now() + patienceMs;
    for (let wait = 200; ; wait = Math.min(wait * 2, 3000)) {
      try {
        return await this.listPages();
      } catch (e) {
        const transient = e instanceof KubeApiError ? e.status === 429 || e.status >= 500 : true;
        if (!transient || Date.now() + wait > deadline) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * Every page of the list, one snapshot (the server serves each page at the first one's
   * resourceVersion), each object completed as its page comes: the pages' objects as parsed,
   * managedFields and all, are let go page by page rather than all held until the last (10,000
   * routes' list: ~7 MiB less at the peak). A continue token the server has forgotten (410)
   * starts the list over.
   */
  private async listPages(): Promise<ListBody> {
    const sep = this.path.includes('?') ? '&' : '?';
    const items: KubeObject[] = [];
    let token: string | undefined;
    for (;;) {
      const more = token ? `&continue=${encodeURIComponent(token)}` : '';
      let page: ListBody;
      try {
        page = await this.client.call<ListBody>('GET', `${this.path}${sep}limit=${LIST_PAGE_SIZE}${more}`);
      } catch (e) {
        if (!(token && e instanceof KubeApiError && e.status === 410)) throw e;
        items.length = 0;
        token = undefined;
        continue;
      }
      for (const raw of page.items ?? []) items.push(this.complete(raw));
      token = page.metadata?.continue || undefined;
      if (!token) return { items, metadata: { resourceVersion: page.metadata?.resourceVersion ?? '' } };
    }
  }

  private relevant(o: KubeObject | undefined): boolean {
    return o !== undefined && (this.hooks.relevant?.(o) ?? true);
  }

  /**
   * Takes a full list (its objects completed); says changed (unless this is the first list) when
   * what is relevant differs.
   */
  private replace(items: readonly KubeObject[], first: boolean): void {
    const next = new Map<string, KubeObject>();
    for (const o of items) next.set(objectKey(o), o);
    let differs = false;
    for (const [key, o] of this.objects) {
      if (!next.has(key)) {
        this.readVersions.delete(key);
        if (this.relevant(o)) differs = true;
      }
    }
    for (const [key, o] of next) {
      const before = this.objects.get(key);
      // A new object is a change without comparing (the first list: every object).
      if (before && readPart(before) === readPart(o)) continue;
      this.readVersions.set(key, ++this.serial);
      if (this.relevant(o) || this.relevant(before)) differs = true;
    }
    const gone = [...this.objects.entries()].filter(([key]) => !next.has(key)).map(([, o]) => o);
    this.objects.clear();
    for (const [key, o] of next) this.objects.set(key, o);
    // After the cache holds them: the status writer reads the object it is told about from it.
    for (const o of gone) this.hooks.deleted?.(this.kind, o);
    for (const o of next.values()) this.hooks.touched?.(this.kind, o);
    if (differs && !first) this.hooks.changed(`${this.kind.kind} (listed again)`);
  }

  /**
   * List items carry no apiVersion and kind, watch events do (first): both are set first here,
   * so an object compares the same (readPart) however it arrived. managedFields and kubectl's
   * last-applied copy of the object are never read and can be large.
   */
  private complete(raw: KubeObject): KubeObject {
    const { managedFields: _mf, annotations, ...metadata } = raw.metadata ?? {};
    const kept = withoutLastApplied(annotations);
    return {
      apiVersion: this.kind.apiVersion,
      kind: this.kind.kind,
      ...raw,
      metadata: kept === undefined ? metadata : { ...metadata, annotations: kept },
    };
  }

  private backoffMs(): number {
    return Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures, 10));
  }

  private watchLoop(): void {
    if (this.stopped) return;
    if (!this.served) {
      this.later(ABSENT_RETRY_MS, true);
      return;
    }
    /** What the stream said: 'gone' (list again) or 'failed' (an error event: back off, list again). */
    let verdict: 'gone' | 'failed' | undefined;
    let events = 0;
    const started = Date.now();
    const w = this.client.watch(
      this.path,
      this.resourceVersion,
      (event) => {
        events++;
        this.problem = undefined;
        verdict ??= this.onEvent(event);
      },
      // Answered: watched now, though a Secret watched by name may bring no event for a minute.
      () => {
        this.problem = undefined;
      },
    );
    this.abortWatch = () => w.abort();
    const healthy = () => events > 0 || Date.now() - started >= HEALTHY_WATCH_MS;
    w.done.then(
      () => {
        if (this.stopped) return;
        if (verdict === 'gone') return this.later(0, true);
        if (verdict === 'failed') {
          this.failures++;
          return this.later(this.backoffMs(), true);
        }
        // The server ended the watch (its time limit): go on from the last version seen. One
        // that ends at once, again and again (a proxy closing it), backs off.
        if (healthy()) this.failures = 0;
        else {
          this.failures++;
          this.problem = 'the watch ended at once, without an event';
        }
        this.later(this.failures === 0 ? 0 : this.backoffMs(), false);
      },
      (e: unknown) => {
        if (this.stopped) return;
        if (verdict === 'gone') return this.later(0, true);
        const isGone = e instanceof KubeApiError && e.status === 410;
        if (isGone) return this.later(0, true);
        if (healthy()) this.failures = 0;
        this.failures++;
        this.problem = (e as Error).message;
        if (this.failures === 1 || this.failures % 10 === 0) {
          this.hooks.log(`watching ${this.kind.kind} failed (${(e as Error).message}); watching again`);
        }
        // The connection failed, not the version: resume from it (a 410 then says to list).
        this.later(this.backoffMs(), false);
      },
    );
  }

  /** After `ms`: lists again then watches (`relist`), or watches from the last version. */
  private later(ms: number, relist: boolean): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!relist) return this.watchLoop();
      this.list(false).then(
        () => this.watchLoop(),
        (e: unknown) => {
          this.failures++;
          this.problem = (e as Error).message;
          if (this.failures === 1 || this.failures % 10 === 0)
            this.hooks.log(`listing ${this.kind.kind} failed (${(e as Error).message}); trying again`);
          this.later(this.backoffMs(), true);
        },
      );
    }, ms);
    this.retryTimer.unref();
  }

  /** Applies one event; says when the stream must end and the kind be listed again. */
  private onEvent(event: WatchEvent): 'gone' | 'failed' | undefined {
    const o = event.object as KubeObject;
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; message?: string };
      if (status.code === 410) return 'gone';
      this.hooks.log(`watching ${this.kind.kind}: ${String(status.message)} (code ${String(status.code)})`);
      this.problem = String(status.message);
      return 'failed';
    }
    const rv = o.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return undefined;
    const obj = this.complete(o);
    const key = objectKey(obj);
    const before = this.objects.get(key);
    if (event.type === 'DELETED') {
      if (!before) return undefined;
      this.objects.delete(key);
      this.readVersions.delete(key);
      this.hooks.deleted?.(this.kind, before);
      if (this.relevant(before)) this.hooks.changed(`${this.kind.kind} ${key} deleted`);
      return undefined;
    }
    this.objects.set(key, obj);
    const echo = before !== undefined && this.hooks.ownStatusWrite?.(this.kind, obj) === true;
    if (!echo && readPart(before) !== readPart(obj)) {
      this.readVersions.set(key, ++this.serial);
      if (this.relevant(obj) || this.relevant(before)) {
        this.hooks.changed(`${this.kind.kind} ${key} ${before ? 'changed' : 'added'}`);
      }
    }
    this.hooks.touched?.(this.kind, obj);
    return undefined;
  }
}
