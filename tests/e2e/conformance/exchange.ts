// One HTTP/1.1 exchange with a chosen Host header, redirects not followed (fetch can set
// neither), for the conformance tables.
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export function exchange(
  url: string,
  path: string,
  host: string,
  headers: Readonly<Record<string, string>> = {},
  method = 'GET',
  /** For an https URL: the CA to trust; the server name (SNI) is the Host. */
  ca?: string,
): Promise<Exchange> {
  const target = new URL(url);
  const tls = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (tls ? httpsRequest : request)(
      {
        host: target.hostname,
        port: target.port,
        path,
        method,
        headers: { ...headers, host },
        agent: false,
        ...(tls ? { ca, servername: host } : {}),
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
