// One exchange with a chosen Host header (and, over TLS, a chosen server name), redirects not
// followed (fetch can set neither), for the conformance tables: HTTP/1.1, or HTTP/2 over TLS.
import { connect } from 'node:http2';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface ExchangeTls {
  /** The CA to trust, PEM. */
  readonly ca: string;
  /** The server name (SNI); default the Host. */
  readonly serverName?: string;
  /** HTTP/2 (ALPN h2) instead of HTTP/1.1. */
  readonly http2?: boolean;
  /** A client certificate to present, PEM, with its key. */
  readonly client?: { readonly certificate: string; readonly privateKey: string };
}

/** One HTTP/2 request on a connection of its own. */
function exchangeHttp2(
  target: URL,
  path: string,
  host: string,
  headers: Readonly<Record<string, string>>,
  method: string,
  tls: ExchangeTls,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const client = tls.client ? { cert: tls.client.certificate, key: tls.client.privateKey } : {};
    const session = connect(target.origin, { ca: tls.ca, servername: tls.serverName ?? host, ...client });
    session.on('error', reject);
    const lowered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const stream = session.request({ ...lowered, ':method': method, ':path': path, ':authority': host });
    const chunks: Buffer[] = [];
    let head: Record<string, string | string[] | undefined> = {};
    stream.on('response', (h) => (head = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      session.close();
      const { ':status': status, ...rest } = head;
      resolve({ status: Number(status), headers: rest, body: Buffer.concat(chunks).toString('utf8') });
    });
    stream.on('error', reject);
    stream.end();
  });
}

export function exchange(
  url: string,
  path: string,
  host: string,
  headers: Readonly<Record<string, string>> = {},
  method = 'GET',
  /** For an https URL: the CA to trust, the server name and the protocol. */
  tls?: ExchangeTls,
): Promise<Exchange> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  if (secure && tls?.http2) return exchangeHttp2(target, path, host, headers, method, tls);
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : request)(
      {
        host: target.hostname,
        port: target.port,
        path,
        method,
        headers: { ...headers, host },
        agent: false,
        ...(secure ? { ca: tls?.ca, servername: tls?.serverName ?? host } : {}),
        ...(secure && tls?.client ? { cert: tls.client.certificate, key: tls.client.privateKey } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
