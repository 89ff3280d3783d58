// The benchmark's backend: the least work an HTTP/1.1 keep-alive server can do. It answers
// every request head with the same small 200 response and never parses more than the
// blank line that ends a head, so the backend costs as little as possible next to Envoy.
// Only for bodiless requests (the benchmark sends GET); loopback addresses only.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { loopbackAddress } from '../backends/loopback-endpoint.js';

const RESPONSE = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 3\r\n\r\nok\n',
  'latin1',
);
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** Responses written at once when a client pipelines; larger bursts go in several writes. */
const MAX_BATCH = 64;
const BATCHES = Array.from({ length: MAX_BATCH + 1 }, (_, n) =>
  Buffer.concat(Array.from({ length: n }, () => RESPONSE)),
);

export interface MinimalBackend {
  readonly addresses: readonly string[];
  readonly port: number;
  close(): Promise<void>;
}

function serve(socket: Socket): void {
  // Bytes after the last complete head: at most 3 of them can start the next "\r\n\r\n".
  let carry: Buffer = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let heads = 0;
    let from = 0;
    for (let i = data.indexOf(HEAD_END, from); i !== -1; i = data.indexOf(HEAD_END, from)) {
      heads++;
      from = i + HEAD_END.length;
    }
    carry = Buffer.from(data.subarray(Math.max(from, data.length - 3)));
    while (heads > 0) {
      const n = Math.min(heads, MAX_BATCH);
      socket.write(BATCHES[n] as Buffer);
      heads -= n;
    }
  });
}

async function listen(server: Server, address: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Listens on every address with one port number, so one EndpointSlice port names them all. */
export async function startMinimalBackend(addresses: readonly string[]): Promise<MinimalBackend> {
  for (const a of addresses) loopbackAddress(a);
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serve(socket);
  };
  // A port free on the first address may be taken on another; a few tries find one free on all.
  for (let attempt = 0; attempt < 20; attempt++) {
    const servers: Server[] = [];
    try {
      const first = createServer(track);
      servers.push(first);
      const port = await listen(first, addresses[0] as string, 0);
      for (const address of addresses.slice(1)) {
        const s = createServer(track);
        servers.push(s);
        await listen(s, address, port);
      }
      return {
        addresses,
        port,
        close: async () => {
          for (const s of sockets) s.destroy();
          await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
        },
      };
    } catch {
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    }
  }
  throw new Error(`no port free on all of ${addresses.join(', ')} after 20 tries`);
}
