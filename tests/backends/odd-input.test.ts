import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { h2c, http1 } from './clients.js';

let backend: RunningBackend;
let origin: string;

beforeAll(async () => {
  backend = await startEchoBackend({ address: '127.0.0.2', name: 'odd' });
  origin = `http://127.0.0.2:${backend.port}`;
});

afterAll(async () => {
  await backend.close();
});

/** Writes raw bytes (optionally half-closing), returns what came back before the backend closed. */
function raw(bytes: string, endAfterWrite: boolean): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(backend.port, '127.0.0.2');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(Buffer.from(bytes, 'latin1'));
    if (endAfterWrite) socket.end();
    setTimeout(() => socket.destroy(), 500);
  });
}

describe('echo backend: odd input never takes it down', () => {
  it.each([
    ['garbage', 'GARBAGE\r\n\r\n', true],
    ['a bad request line', 'GET /x HTTP/9.9\r\nhost: x\r\n\r\n', false],
    ['half an HTTP/2 preface', 'PRI * HTTP/2.0\r\n', true],
    ['an HTTP/2 preface and junk frames', `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n${'\xff'.repeat(64)}`, false],
    ['nothing at all', '', true],
  ])('%s', async (_name, bytes, endAfterWrite) => {
    await raw(bytes, endAfterWrite);
    expect((await http1(origin, '/healthz')).status).toBe(200);
    expect((await h2c(origin, '/healthz')).status).toBe(200);
  });

  it('answers a percent-garbled or absolute-form target', async () => {
    expect((await http1(origin, '/%zz?uuid=%ff')).status).toBe(400);
    const reply = await raw(
      'GET http://elsewhere.example/abs?x=1 HTTP/1.1\r\nhost: elsewhere.example\r\n\r\n',
      false,
    );
    expect(reply).toContain('200 OK');
    expect(reply).toContain('"path": "http://elsewhere.example/abs?x=1"');
  });
});
