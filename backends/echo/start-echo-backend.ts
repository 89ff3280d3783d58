// The echo backend: HTTP/1.1, h2c with prior knowledge and WebSocket on one loopback port
// (or, given a key pair, HTTPS: HTTP/1.1, WebSocket and h2 chosen by ALPN).
import { createServer as createHttp1Server } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import { constants as tlsConstants } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { TLSSocket, createServer as createTlsServer } from 'node:tls';
import { AttemptLedger } from '../attempt-ledger.js';
import { backendName } from '../backend-name.js';
import { listenPort, loopbackAddress } from '../loopback-endpoint.js';
import { sniffProtocol } from '../protocol-sniffer.js';
import type { RunningBackend } from '../running-backend.js';
import { handleEcho, type EchoContext } from './echo-handler.js';
import { Http1Exchange, Http2Exchange } from './exchange.js';
import { WebSocketEcho } from './websocket-echo.js';

export interface EchoBackendOptions {
  /** An IPv4 loopback address, 127.0.0.0/8. */
  readonly address: string;
  /** 0 (the default) picks a free port; the bound one is in the result. */
  readonly port?: number;
  /** Reported in every answer and the `x-backend-instance` header; defaults to `echo-<address>`. */
  readonly name?: string;
  /** Share one ledger between backends so attempts count across them, as retries may move between hosts. */
  readonly ledger?: AttemptLedger;
  /**
   * Serve TLS with this PEM key pair (HTTP/1.1, WebSocket and h2 by ALPN) instead of cleartext;
   * with `clientCa`, only to clients with a certificate from that CA. Answers then say the
   * server name the client sent and the common name of its certificate (TLS_HEADERS).
   */
  readonly tls?: { readonly certificate: string; readonly privateKey: string; readonly clientCa?: string };
}

/** Headers a TLS echo backend adds: the client's SNI and its certificate's common name. */
export const TLS_HEADERS = {
  serverName: 'x-backend-tls-server-name',
  clientCertificate: 'x-backend-tls-client-cn',
} as const;

/** What the TLS connection under a request says of its client. */
function tlsHeaders(socket: unknown): Record<string, string> {
  if (!(socket instanceof TLSSocket)) return {};
  const servername = (socket as TLSSocket & { servername?: string | false }).servername;
  const cn = socket
    .getPeerX509Certificate()
    ?.subject.split('\n')
    .find((l) => l.startsWith('CN='));
  return {
    ...(typeof servername === 'string' ? { [TLS_HEADERS.serverName]: servername } : {}),
    ...(cn ? { [TLS_HEADERS.clientCertificate]: cn.slice(3) } : {}),
  };
}

export async function startEchoBackend(options: EchoBackendOptions): Promise<RunningBackend> {
  const address = loopbackAddress(options.address);
  const requestedPort = listenPort(options.port ?? 0);
  const instance = backendName(options.name ?? `echo-${address}`);
  const ledger = options.ledger ?? new AttemptLedger();
  const context: { -readonly [K in keyof EchoContext]: EchoContext[K] } = {
    instance,
    address,
    port: 0,
    ledger,
  };

  const http1 = createHttp1Server((req, res) => {
    for (const [k, v] of Object.entries(tlsHeaders(req.socket))) res.setHeader(k, v);
    void handleEcho(new Http1Exchange(req, res), context);
  });
  const http2 = createHttp2Server((req, res) => {
    for (const [k, v] of Object.entries(tlsHeaders(req.stream.session?.socket))) res.setHeader(k, v);
    void handleEcho(new Http2Exchange(req, res), context);
  });
  const websocket = new WebSocketEcho(instance);
  http1.on('upgrade', (req, socket, head: Buffer) => websocket.upgrade(req, socket, head));
  http1.on('clientError', (_error, socket) => socket.destroy());
  // Idle connections stay open until the gateway closes them (0: no keep-alive timeout). Were the
  // backend to close one first, it could do so as a request was on its way: a reset that a test
  // would count as a failure (Envoy keeps idle connections up to its upstream idle timeout).
  http1.keepAliveTimeout = 0;
  http2.on('sessionError', () => undefined);

  const sockets = new Set<Socket>();
  const tcp = options.tls
    ? createTlsServer(
        {
          cert: options.tls.certificate,
          key: options.tls.privateKey,
          ALPNProtocols: ['h2', 'http/1.1'],
          // No session resumption: a resumed session does not tell the server name (TLS_HEADERS).
          secureOptions: tlsConstants.SSL_OP_NO_TICKET,
          ...(options.tls.clientCa
            ? { ca: options.tls.clientCa, requestCert: true, rejectUnauthorized: true }
            : {}),
        },
        (socket) => {
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
          if (socket.alpnProtocol === 'h2') http2.emit('connection', socket);
          else http1.emit('connection', socket);
        },
      )
    : createTcpServer((socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
        sniffProtocol(socket, (protocol) => {
          if (protocol === 'h2c') {
            http2.emit('connection', socket);
          } else {
            http1.emit('connection', socket);
            socket.resume();
          }
        });
      });

  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(requestedPort, address, () => {
      tcp.off('error', reject);
      resolve();
    });
  });
  context.port = (tcp.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    name: instance,
    address,
    port: context.port,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        tcp.close(() => resolve());
        websocket.close();
        for (const socket of sockets) socket.destroy();
        http2.close();
        http1.close();
      });
      return closing;
    },
  };
}
