import { describe, expect, it } from 'vitest';
import { runCli, usage } from '../../backends/cli.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { http1, json } from './clients.js';

interface Run {
  readonly code: Promise<number>;
  readonly out: string[];
  readonly err: string[];
  readonly started: Promise<readonly RunningBackend[]>;
  stop(): void;
}

function start(argv: string[]): Run {
  const out: string[] = [];
  const err: string[] = [];
  let stop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let onStarted = (_backends: readonly RunningBackend[]): void => undefined;
  const started = new Promise<readonly RunningBackend[]>((resolve) => {
    onStarted = resolve;
  });
  const code = runCli(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    stopped,
    started: onStarted,
  });
  return { code, out, err, started, stop };
}

describe('backends command line', () => {
  it('starts several echo instances sharing one ledger and prints where they listen', async () => {
    const run = start([
      'echo',
      '--address',
      '127.0.0.2',
      '--address',
      '127.0.0.3',
      '--name',
      'b1',
      '--name',
      'b2',
    ]);
    const backends = await run.started;
    try {
      const lines = run.out.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual([
        { backend: 'echo', name: 'b1', address: '127.0.0.2', port: backends[0]?.port },
        { backend: 'echo', name: 'b2', address: '127.0.0.3', port: backends[1]?.port },
      ]);
      const query = '/x?uuid=cli-shared&succeedAfter=1&responseCode=503';
      expect((await http1(`http://127.0.0.2:${backends[0]?.port}`, query)).status).toBe(503);
      const second = await http1(`http://127.0.0.3:${backends[1]?.port}`, query);
      expect([second.status, json(second)['attempt']]).toEqual([200, 2]);
    } finally {
      run.stop();
    }
    expect(await run.code).toBe(0);
  });

  it('starts a grpc instance', async () => {
    const run = start(['grpc', '--address', '127.0.0.4', '--port', '0']);
    const [backend] = await run.started;
    run.stop();
    expect(await run.code).toBe(0);
    expect(JSON.parse(run.out[0] ?? '')).toEqual({
      backend: 'grpc',
      name: 'grpc-127.0.0.4',
      address: '127.0.0.4',
      port: backend?.port,
    });
  });

  it.each([
    [[], 2, usage],
    [['echo'], 2, usage],
    [['web', '--address', '127.0.0.2'], 2, usage],
    [['echo', '--address', '127.0.0.2', '--bogus'], 2, 'bogus'],
    [
      ['echo', '--address', '127.0.0.2', '--address', '127.0.0.3', '--name', 'one'],
      2,
      'one --name per --address',
    ],
    [['echo', '--address', '192.168.1.1'], 1, 'loopback'],
    [['echo', '--address', '127.0.0.2', '--port', 'http'], 1, '0-65535'],
  ])('%j exits %d', async (argv, exitCode, message) => {
    const run = start(argv);
    expect(await run.code).toBe(exitCode);
    expect(run.err.join('\n')).toContain(message);
  });
});
