// WebSocket echo on /ws over an HTTP/1.1 upgrade: every text or binary message comes back unchanged.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';

export const websocketPath = '/ws';

/** Largest message echoed; a bigger one closes the socket with 1009 (message too big). */
const maxMessageBytes = 1 << 20;

export class WebSocketEcho {
  readonly #server: WebSocketServer;

  constructor(instance: string) {
    this.#server = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
    this.#server.on('headers', (headers) => headers.push(`x-backend-instance: ${instance}`));
    this.#server.on('connection', (socket) => {
      socket.on('error', () => socket.terminate());
      socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
    });
  }

  /** Takes over an HTTP/1.1 upgrade: a WebSocket handshake on /ws is accepted, anything else refused. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const path = (request.url ?? '').split('?')[0];
    const isWebSocket = (request.headers.upgrade ?? '').toLowerCase() === 'websocket';
    if (path !== websocketPath || !isWebSocket) {
      // Only WebSocket on /ws is spoken; h2c must use prior knowledge, not the HTTP/1.1 Upgrade dance.
      const reason = isWebSocket
        ? `WebSocket is served on ${websocketPath} only`
        : 'only WebSocket upgrades are supported; use HTTP/2 prior knowledge for h2c';
      socket.end(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: ${reason.length + 1}\r\nconnection: close\r\n\r\n${reason}\n`,
      );
      return;
    }
    this.#server.handleUpgrade(request, socket, head, (ws) => this.#server.emit('connection', ws, request));
  }

  close(): void {
    for (const client of this.#server.clients) client.terminate();
    this.#server.close();
  }
}
