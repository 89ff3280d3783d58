// A proxy in front of a real API server (plain HTTP on loopback, HTTPS to the server): every
// request passes through, watches streamed, except those `refused` picks while `refusing` is
// set, answered 403 with the Status an authorizer's refusal carries. It stands in for an
// authorization the API server's RBAC cannot express (get one Secret, not list or watch it,
// while the same account lists every Secret of the cluster).
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface RefusingProxy {
  readonly url: string;
  /** While true, the requests `refused` picks get 403. */
  refusing: boolean;
  /** Requests refused so far. */
  readonly refusals: number;
  close(): Promise<void>;
}

export async function startRefusingProxy(
  upstream: string,
  ca: Buffer,
  refused: (method: string, path: string) => boolean,
): Promise<RefusingProxy> {
  const target = new URL(upstream);
  const state = { refusing: true, refusals: 0 };
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const out = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        ca,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  };
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    if (!state.refusing || !refused(method, req.url ?? '')) return forward(req, res);
    state.refusals++;
    const verb = /[?&]watch=(1|true)/.test(req.url ?? '') ? 'watch' : 'list';
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `secrets is forbidden: User "steadfast" cannot ${verb} resource "secrets" in API group "" in the namespace "steadfast-system"`,
        reason: 'Forbidden',
        code: 403,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get refusing() {
      return state.refusing;
    },
    set refusing(on: boolean) {
      state.refusing = on;
    },
    get refusals() {
      return state.refusals;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
