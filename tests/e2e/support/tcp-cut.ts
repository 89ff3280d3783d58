// A TCP proxy on loopback that a test can cut: while cut, nothing passes either way — open
// connections hang with their bytes unanswered and new ones are accepted but never answered,
// as when a network partition leaves a replica unable to reach its API server (no refusal,
// no reset: the replica only learns from its own time limits).
import { type Server, type Socket, connect, createServer } from 'node:net';

export interface TcpCut {
  readonly port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpCut(target: { host: string; port: number }): Promise<TcpCut> {
  let cut = false;
  /** Client side → its upstream, while connected. */
  const open = new Map<Socket, Socket>();
  const held = new Set<Socket>();
  const hold = (client: Socket) => {
    held.add(client);
    client.on('close', () => held.delete(client));
  };
  const server: Server = createServer((client) => {
    client.on('error', () => client.destroy());
    if (cut) return hold(client);
    const upstream = connect(target.port, target.host);
    open.set(client, upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      if (open.has(client)) client.destroy();
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut() {
      cut = true;
      // The client side stays open and hears nothing more; the API server's side is gone.
      for (const [client, upstream] of open) {
        open.delete(client);
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.destroy();
        client.pause();
        hold(client);
      }
    },
    restore() {
      cut = false;
      for (const s of held) s.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of [...open.keys(), ...held]) s.destroy();
        server.close(() => resolve());
      }),
  };
}
