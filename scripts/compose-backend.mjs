#!/usr/bin/env node
// docker compose only: runs one demo backend and makes it reachable by its compose service
// name. The backends listen on loopback only (backends/loopback-endpoint.ts), so this
// starts one on 127.0.0.1 and forwards the container's port to it, byte for byte (HTTP/1.1,
// h2c, WebSocket and gRPC alike). With an attempts directory (a volume every backend
// mounts), attempts of a uuid are counted across the containers, so the retry demo's
// `succeedAfter` holds wherever each retry lands.
//
//   node scripts/compose-backend.mjs <echo|grpc> <name> <port> [<attempts-dir>]
import { createConnection, createServer } from 'node:net';

const [kind, name, portText, attemptsDir, ...rest] = process.argv.slice(2);
const port = Number(portText);
if (
  (kind !== 'echo' && kind !== 'grpc') ||
  !name ||
  !Number.isInteger(port) ||
  port < 1 ||
  port > 65535 ||
  rest.length > 0
) {
  process.stderr.write('usage: compose-backend.mjs <echo|grpc> <name> <port> [<attempts-dir>]\n');
  process.exit(2);
}
const { startEchoBackend } = await import('../dist/backends/echo/start-echo-backend.js');
const { startGrpcBackend } = await import('../dist/backends/grpc/start-grpc-backend.js');
const { AttemptLedger } = await import('../dist/backends/attempt-ledger.js');
const { DirectoryAttemptCounter } = await import('../dist/backends/directory-attempt-counter.js');
const start = kind === 'grpc' ? startGrpcBackend : startEchoBackend;
const ledger = attemptsDir
  ? new AttemptLedger({ counter: new DirectoryAttemptCounter(attemptsDir) })
  : undefined;
const backend = await start({ address: '127.0.0.1', port: 0, name, ...(ledger ? { ledger } : {}) });

const forwarder = createServer((client) => {
  const upstream = createConnection({ host: '127.0.0.1', port: backend.port });
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
forwarder.listen(port, '0.0.0.0', () => {
  process.stdout.write(`${JSON.stringify({ backend: kind, name, port })}\n`);
});

const stop = () => {
  forwarder.close();
  void backend.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
