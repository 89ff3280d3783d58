// The benchmark's own requests to the local API server (scripts/kube-local.mjs): HTTPS with the
// admin's token, on one kept-alive connection, so that a change timed from its request is not
// also timed for a process start, a kubeconfig read or a TLS handshake.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { LocalKube } from '../scripts/kube-local.mjs';

export interface KubeRequests {
  /** Sends one request; resolves once its answer is read, rejects on an error status. */
  send(method: string, path: string, body?: unknown, type?: string): Promise<unknown>;
  close(): void;
}

/**
 * Idle connections close after this long: the API server closes its own after 90 s, and a
 * request sent on a connection it is closing would fail.
 */
const IDLE_MS = 20_000;

export function kubeRequests(kube: LocalKube): KubeRequests {
  // One socket: the changes go one at a time, and each finds the connection the last one left.
  const agent = new Agent({ keepAlive: true, maxSockets: 1, timeout: IDLE_MS, ca: readFileSync(kube.ca) });
  const url = new URL(kube.server);
  return {
    send: (method, path, body, type = 'application/json') =>
      new Promise((resolve, reject) => {
        const data = body === undefined ? undefined : JSON.stringify(body);
        const headers = {
          authorization: `Bearer ${kube.adminToken}`,
          accept: 'application/json',
          ...(data !== undefined ? { 'content-type': type, 'content-length': Buffer.byteLength(data) } : {}),
        };
        const options = { host: url.hostname, port: url.port, method, path, headers, agent };
        const req = request(options, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 500) >= 300)
              reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            else resolve(text === '' ? undefined : JSON.parse(text));
          });
        });
        req.on('error', reject);
        req.end(data);
      }),
    close: () => agent.destroy(),
  };
}
