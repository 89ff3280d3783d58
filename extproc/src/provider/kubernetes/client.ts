// A small JSON client for the Kubernetes API server. The kubeconfig (or the in-cluster service
// account) supplies the TLS settings and credentials (kube-credentials.ts); requests go out as
// plain JSON so that every object reaches the decoders exactly as the API server stores it —
// the typed clients would turn timestamps into Dates and drop fields their models do not know.
import { request as httpRequest } from 'node:http';
import { type RequestOptions, request as httpsRequest } from 'node:https';
import { ConnectionPool } from './connection-pool.js';
import { type KubeCredentials, kubeCredentials } from './kube-credentials.js';
import { DEFAULT_RATE_LIMIT, type RateLimit, TokenBucket } from './rate-limit.js';

export interface KubeResponse<T> {
  readonly status: number;
  readonly body: T;
}

/** An error status from the API server, with its reason (NotFound, Conflict, Forbidden...). */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A request not sent: once the rate limit let it go, its caller no longer wanted it (timeout ≤ 0). */
export class NotSent extends Error {}

/** Socket inactivity limit of a request; a function is asked once the rate limit lets the request go. */
export type TimeoutMs = number | (() => number);

/** One event of a watch: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export class KubeClient {
  private constructor(
    private readonly credentials: KubeCredentials,
    /** The API server's URL, for logs. */
    readonly server: string,
    /**
     * Every request takes a token (undefined: no limit). Writes wait for theirs; reads (lists,
     * watches, Secret lookups, a few per kind) go at once, so a start or a relist is never held
     * back, and the writes after them wait the longer.
     */
    private readonly bucket: TokenBucket | undefined,
  ) {}

  /**
   * From a kubeconfig file, or the pod's service account when `file` is undefined (in-cluster),
   * its requests under `limit`. Rejects with a readable message when neither works.
   */
  static async load(file: string | undefined, limit: RateLimit = DEFAULT_RATE_LIMIT): Promise<KubeClient> {
    if (file === undefined && !process.env.KUBERNETES_SERVICE_HOST) {
      throw new Error(
        'not running in a cluster (KUBERNETES_SERVICE_HOST is unset): give --kubeconfig FILE instead of --in-cluster',
      );
    }
    const credentials = await kubeCredentials(file);
    if (credentials.server === undefined)
      throw new Error(`the kubeconfig ${file ?? '(in-cluster)'} names no current cluster`);
    return new KubeClient(credentials, credentials.server.replace(/\/+$/, ''), new TokenBucket(limit));
  }

  /**
   * The same cluster and credentials on connections of its own, its requests not counted: for
   * the Lease, whose renewal must never wait behind thousands of status writes.
   */
  unlimited(): KubeClient {
    return new KubeClient(this.credentials, this.server, undefined);
  }

  /** Sends one request; resolves with the status and the parsed body, whatever the status. */
  async send<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs: TimeoutMs = 30_000,
  ): Promise<KubeResponse<T>> {
    const res = await this.open(method, path, body, { idleMs: timeoutMs });
    const chunks: Buffer[] = [];
    for await (const chunk of res.stream) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = { message: text.slice(0, 200) };
    }
    return { status: res.status, body: parsed as T };
  }

  /** Like send, but an error status throws a KubeApiError. */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs?: TimeoutMs,
  ): Promise<T> {
    const res = await this.send<T>(method, path, body, timeoutMs);
    if (res.status >= 400) throw apiError(method, path, res.status, res.body);
    return res.body;
  }

  /**
   * Watches `path` from `resourceVersion`: calls `onEvent` for each event until the server
   * closes the stream (resolves) or it fails (rejects); `onOpen` once the server answered it with
   * a success status, before any event. Returns what aborts it. A stream that
   * carries nothing past the server's own time limit is taken for dead (a half-open connection
   * after a load balancer failed over) and fails.
   */
  watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    onOpen?: () => void,
  ): { readonly done: Promise<void>; abort(): void } {
    const sep = path.includes('?') ? '&' : '?';
    // The server ends a watch after this long; the caller starts the next one from where it left off.
    const serverLimitS = 240 + Math.floor(Math.random() * 60);
    const url =
      `${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}` +
      `&timeoutSeconds=${serverLimitS}`;
    const control: { aborted: boolean; abort?: () => void } = { aborted: false };
    const done = (async () => {
      const res = await this.open('GET', url, undefined, { idleMs: (serverLimitS + 30) * 1000, control });
      if (res.status >= 400) {
        const chunks: Buffer[] = [];
        for await (const chunk of res.stream) chunks.push(chunk as Buffer);
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = {};
        }
        throw apiError('WATCH', path, res.status, body);
      }
      onOpen?.();
      let rest = '';
      for await (const chunk of res.stream) {
        rest += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = rest.indexOf('\n')) >= 0) {
          const line = rest.slice(0, nl);
          rest = rest.slice(nl + 1);
          if (line.trim() === '') continue;
          onEvent(JSON.parse(line) as WatchEvent);
        }
      }
    })();
    return {
      done,
      abort: () => {
        control.aborted = true;
        control.abort?.();
      },
    };
  }

  /**
   * This client's connections, for requests and watches alike (a watch's, once the server ends
   * it, serves the next request). Not through a proxy the kubeconfig names: there every request
   * gets the proxy's agent @kubernetes/client-node makes.
   */
  private readonly pool = new ConnectionPool();

  /** Closes the pooled connections. */
  close(): void {
    this.pool.close();
  }

  private async open(
    method: string,
    path: string,
    body: unknown,
    opts: { readonly idleMs: TimeoutMs; readonly control?: { aborted: boolean; abort?: () => void } },
  ): Promise<{ status: number; stream: NodeJS.ReadableStream }> {
    if (method === 'GET') this.bucket?.spend();
    else await this.bucket?.take();
    const idleMs = typeof opts.idleMs === 'function' ? opts.idleMs() : opts.idleMs;
    if (idleMs <= 0) throw new NotSent(`${method} ${path}: not sent, no longer wanted`);
    const url = new URL(path, `${this.server}/`);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const options: RequestOptions = {
      method,
      headers: {
        accept: 'application/json',
        ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
      },
    };
    // Credentials (a token file re-read, an exec plugin) and TLS material, as the kubeconfig says.
    await this.credentials.apply(options);
    if (opts.control?.aborted) throw new Error('watch stopped');
    // The pool's agent, made again only when the TLS material just read (files re-read, an exec
    // plugin asked) changed; @kubernetes/client-node's new agent per request is not used.
    if (url.protocol === 'https:' && !this.credentials.proxied) this.pool.use(options);
    return this.exchange(url, options, payload, idleMs, opts.control);
  }

  /**
   * One request on its way. A read (a list, a watch) that fails on a kept-alive connection
   * before any answer is sent once more on a new one: the server, or a proxy before it, closed
   * that connection while it was idle, and a watch would otherwise wait out a back-off.
   */
  private exchange(
    url: URL,
    options: RequestOptions,
    payload: Buffer | undefined,
    idleMs: number,
    control: { aborted: boolean; abort?: () => void } | undefined,
    again = options.method === 'GET',
  ): Promise<{ status: number; stream: NodeJS.ReadableStream }> {
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
      let answered = false;
      const req = send(url, options, (res) => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, stream: res });
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        const stale = again && !answered && req.reusedSocket && e.code === 'ECONNRESET';
        if (!stale || control?.aborted) return reject(e);
        this.pool.dropIdle();
        resolve(this.exchange(url, options, payload, idleMs, control, false));
      });
      // Socket inactivity: no answer (a request) or nothing on the stream (a watch) this long.
      req.setTimeout(idleMs, () =>
        req.destroy(new Error(`nothing from ${this.server} in ${Math.round(idleMs / 1000)} s`)),
      );
      if (control) control.abort = () => req.destroy(new Error('watch stopped'));
      req.end(payload);
    });
  }
}

function apiError(method: string, path: string, status: number, body: unknown): KubeApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const reason = typeof b.reason === 'string' ? b.reason : String(status);
  const message = typeof b.message === 'string' ? b.message : `HTTP ${status}`;
  return new KubeApiError(status, reason, `${method} ${path}: ${status} ${reason}: ${message}`);
}
