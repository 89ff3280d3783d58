// An HTTP/1.1 backend whose keep-alive timeout races the gateway's reuse of a connection, made
// deterministic: a request that arrives on a connection idle for `idleCloseMs` or more is read
// and the connection closed without an answer, as when the backend closed that idle connection
// just as the request was on its way. Every other request gets 200 and the connection is kept.
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';

export interface IdleClosingBackend {
  readonly address: string;
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Requests cut by the idle close (read, never answered). */
  readonly cut: number;
  /** Resolves once `idleCloseMs` passed since the last answer, by this backend's clock. */
  untilIdle(): Promise<void>;
  close(): Promise<void>;
}

/** The length of the request at the start of `data` (head plus content-length body), or 0 if incomplete. */
function requestLength(data: Buffer): number {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return 0;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(data.subarray(0, end).toString('latin1'))?.[1];
  const total = end + 4 + Number(length ?? 0);
  return data.length >= total ? total : 0;
}

export async function startIdleClosingBackend(
  address: string,
  idleCloseMs: number,
): Promise<IdleClosingBackend> {
  // Each open connection, with when it last answered (null until its first request).
  const sockets = new Map<Socket, number | null>();
  const state = { connections: 0, cut: 0, lastAnswer: 0 };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.set(socket, null);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let n = requestLength(pending); n > 0; n = requestLength(pending)) {
        pending = pending.subarray(n);
        const idleSince = sockets.get(socket) ?? null;
        if (idleSince !== null && performance.now() - idleSince >= idleCloseMs) {
          state.cut++;
          socket.destroy();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
        state.lastAnswer = performance.now();
        sockets.set(socket, state.lastAnswer);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  return {
    address,
    port: (server.address() as AddressInfo).port,
    get connections() {
      return state.connections;
    },
    get cut() {
      return state.cut;
    },
    untilIdle: async () => {
      const left = state.lastAnswer + idleCloseMs - performance.now();
      if (left > 0) await new Promise((r) => setTimeout(r, Math.ceil(left)));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets.keys()) s.destroy();
        server.close(() => resolve());
      }),
  };
}
