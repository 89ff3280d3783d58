import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { curl, http1 } from './clients.js';

let backend: RunningBackend;
let base: string;

beforeAll(async () => {
  backend = await startEchoBackend({ address: '127.0.0.2', name: 'ws1' });
  base = `127.0.0.2:${backend.port}`;
});

afterAll(async () => {
  await backend.close();
});

function open(path: string): Promise<{ socket: WebSocket; instance: string | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://${base}${path}`);
    let instance: string | undefined;
    socket.once('upgrade', (response) => {
      instance = response.headers['x-backend-instance'] as string | undefined;
    });
    socket.once('open', () => resolve({ socket, instance }));
    socket.once('error', reject);
  });
}

function nextMessage(socket: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) =>
    socket.once('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary })),
  );
}

describe('echo backend: WebSocket on /ws', () => {
  it('echoes text and binary frames unchanged and names the instance in the handshake', async () => {
    const { socket, instance } = await open('/ws');
    try {
      expect(instance).toBe('ws1');
      socket.send('hello text');
      const text = await nextMessage(socket);
      expect([text.isBinary, text.data.toString('utf8')]).toEqual([false, 'hello text']);

      const bytes = Buffer.from([0, 1, 2, 250, 255]);
      socket.send(bytes);
      const binary = await nextMessage(socket);
      expect(binary.isBinary).toBe(true);
      expect(Buffer.compare(binary.data, bytes)).toBe(0);
    } finally {
      socket.close();
    }
  });

  it('keeps plain HTTP working on the same port while a WebSocket is open', async () => {
    const { socket } = await open('/ws?x=1');
    try {
      expect((await http1(`http://${base}`, '/healthz')).status).toBe(200);
    } finally {
      socket.close();
    }
  });

  it('refuses a WebSocket handshake on another path', async () => {
    await expect(open('/not-ws')).rejects.toThrow('400');
  });

  it('answers an h2c Upgrade request with 400 pointing to prior knowledge', async () => {
    const result = await curl(['--http2', '--include', `http://${base}/`]);
    expect(result.stdout).toContain('400');
    expect(result.stdout).toContain('prior knowledge');
  });
});
