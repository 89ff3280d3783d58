// One request/response pair, whichever protocol carried it, so the echo logic is written once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';

export type HttpProtocol = 'HTTP/1.1' | 'HTTP/2';

/** How a failing attempt ends without a response: the transport is reset, or (HTTP/2) the stream refused. */
export type ResetKind = 'reset' | 'refuse';

export interface Exchange {
  readonly protocol: HttpProtocol;
  readonly method: string;
  /** The request target as sent, path and query. */
  readonly target: string;
  readonly host: string;
  /** Request headers by lower-case name, repeated headers kept apart, HTTP/2 pseudo-headers left out. */
  readonly headers: Readonly<Record<string, string[]>>;
  /** Reads the body; null when it is longer than `limit` bytes. */
  readBody(limit: number): Promise<Buffer | null>;
  respond(status: number, headers: Readonly<Record<string, string>>, body: string): void;
  reset(kind: ResetKind): void;
  /** True once the client went away or the exchange was answered or reset. */
  readonly closed: boolean;
  /** Called once when the exchange closes; `answered` is false when the client left before an answer. */
  onClose(listener: (answered: boolean) => void): void;
}

type Request = IncomingMessage | Http2ServerRequest;

function headerLists(rawHeaders: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    if (name.startsWith(':')) continue;
    (headers[name] ??= []).push(rawHeaders[i + 1] ?? '');
  }
  return headers;
}

function readBody(req: Request, limit: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const settle = (body: Buffer | null): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length > limit) {
        settle(null);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => settle(Buffer.concat(chunks)));
    req.once('error', () => settle(Buffer.concat(chunks)));
    req.once('close', () => settle(Buffer.concat(chunks)));
  });
}

abstract class BaseExchange implements Exchange {
  abstract readonly protocol: HttpProtocol;
  readonly method: string;
  readonly target: string;
  readonly headers: Readonly<Record<string, string[]>>;
  abstract readonly host: string;
  #closed = false;
  #answered = false;
  readonly #listeners: ((answered: boolean) => void)[] = [];

  constructor(
    protected readonly req: Request,
    response: ServerResponse | Http2ServerResponse,
  ) {
    this.method = req.method ?? 'GET';
    this.target = req.url ?? '/';
    this.headers = headerLists(req.rawHeaders);
    response.once('close', () => this.markClosed());
  }

  get closed(): boolean {
    return this.#closed;
  }

  readBody(limit: number): Promise<Buffer | null> {
    return readBody(this.req, limit);
  }

  onClose(listener: (answered: boolean) => void): void {
    if (this.#closed) listener(this.#answered);
    else this.#listeners.push(listener);
  }

  respond(status: number, headers: Readonly<Record<string, string>>, body: string): void {
    if (this.#closed) return;
    this.#answered = true;
    this.write(status, headers, body);
    this.markClosed();
  }

  reset(kind: ResetKind): void {
    if (this.#closed) return;
    this.#answered = true;
    this.abort(kind);
    this.markClosed();
  }

  protected abstract write(status: number, headers: Readonly<Record<string, string>>, body: string): void;
  protected abstract abort(kind: ResetKind): void;

  private markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#listeners.splice(0)) listener(this.#answered);
  }
}

export class Http1Exchange extends BaseExchange {
  readonly protocol = 'HTTP/1.1';
  readonly host: string;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
  ) {
    super(request, response);
    this.host = request.headers.host ?? '';
  }

  protected write(status: number, headers: Readonly<Record<string, string>>, body: string): void {
    this.response.writeHead(status, headers);
    this.response.end(body);
  }

  protected abort(_kind: ResetKind): void {
    // An RST rather than a FIN, like the conformance backend's SO_LINGER 0: the client sees a reset.
    this.request.socket.resetAndDestroy();
  }
}

export class Http2Exchange extends BaseExchange {
  readonly protocol = 'HTTP/2';
  readonly host: string;

  constructor(
    request: Http2ServerRequest,
    private readonly response: Http2ServerResponse,
  ) {
    super(request, response);
    this.host = request.authority ?? request.headers.host ?? '';
  }

  protected write(status: number, headers: Readonly<Record<string, string>>, body: string): void {
    this.response.writeHead(status, headers);
    this.response.end(body);
  }

  protected abort(kind: ResetKind): void {
    // Only this stream: other requests multiplexed on the connection are left alone.
    this.response.stream.close(kind === 'refuse' ? h2.NGHTTP2_REFUSED_STREAM : h2.NGHTTP2_INTERNAL_ERROR);
  }
}
