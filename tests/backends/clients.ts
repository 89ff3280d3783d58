// Small real clients for the backend tests: HTTP/1.1 over node:http, h2c over node:http2, and curl.
import { execFile } from 'node:child_process';
import { request as http1Request } from 'node:http';
import { connect as http2Connect, constants as h2 } from 'node:http2';

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** JSON body of an answer. */
export function json<T = Record<string, unknown>>(answer: Answer): T {
  return JSON.parse(answer.body) as T;
}

/** One HTTP/1.1 request on a fresh connection; rejects on a transport error (reset, refused). */
export function http1(
  origin: string,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string | string[]>;
    body?: string;
    signal?: AbortSignal;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http1Request(new URL(path, origin), {
      method: options.method ?? 'GET',
      headers: options.headers,
      agent: false,
      signal: options.signal,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.end(options.body);
  });
}

export class StreamResetError extends Error {
  constructor(readonly code: number) {
    super(`stream reset with HTTP/2 error code ${code}`);
  }
}

/** One h2c (prior knowledge) request on a fresh session; rejects with StreamResetError on RST_STREAM. */
export function h2c(
  origin: string,
  path: string,
  options: { method?: string; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(origin);
    session.on('error', reject);
    const stream = session.request({
      [h2.HTTP2_HEADER_METHOD]: options.method ?? 'GET',
      [h2.HTTP2_HEADER_PATH]: path,
    });
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (received) => {
      status = Number(received[h2.HTTP2_HEADER_STATUS]);
      headers = received;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      session.close();
      if (stream.rstCode !== h2.NGHTTP2_NO_ERROR) reject(new StreamResetError(stream.rstCode));
      else resolve({ status, headers, body: Buffer.concat(chunks).toString('utf8') });
    });
    stream.end(options.body);
  });
}

export interface CurlResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command without a shell and collects its output, whatever its exit code. */
export function run(file: string, args: readonly string[], timeoutMs = 20_000): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ exitCode: code, stdout, stderr });
    });
  });
}

export function curl(args: readonly string[]): Promise<CurlResult> {
  return run('curl', ['--silent', '--show-error', ...args]);
}
