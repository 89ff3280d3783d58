import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptLedger, type AttemptRecord } from '../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { curl, h2c, http1, json, StreamResetError } from './clients.js';

let backend: RunningBackend;
let origin: string;
let uuidCounter = 0;
const uuid = (): string => `echo-test-${process.pid}-${++uuidCounter}`;

beforeAll(async () => {
  backend = await startEchoBackend({ address: '127.0.0.2', port: 0, name: 'b1' });
  origin = `http://${backend.address}:${backend.port}`;
});

afterAll(async () => {
  await backend.close();
});

async function attemptsOf(id: string): Promise<{ count: number; attempts: AttemptRecord[] }> {
  return json(await http1(origin, `/__attempts?uuid=${id}`));
}

describe('echo backend: what it reports', () => {
  it('binds the asked loopback address and reports the kernel-chosen port', () => {
    expect(backend.address).toBe('127.0.0.2');
    expect(backend.port).toBeGreaterThan(0);
    expect(backend.name).toBe('b1');
  });

  it('echoes an HTTP/1.1 request with repeated headers kept apart', async () => {
    const answer = await http1(origin, '/some/path?x=1', { headers: { 'x-test': ['a', 'b'] } });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-backend-instance']).toBe('b1');
    expect(answer.headers['content-type']).toBe('application/json');
    expect(json(answer)).toMatchObject({
      instance: 'b1',
      address: '127.0.0.2',
      port: backend.port,
      protocol: 'HTTP/1.1',
      method: 'GET',
      path: '/some/path?x=1',
      host: `127.0.0.2:${backend.port}`,
      headers: { 'x-test': ['a', 'b'] },
      uuid: null,
      attempt: null,
      failed: false,
    });
  });

  it('echoes a request body sent with fetch', async () => {
    const response = await fetch(`${origin}/post`, { method: 'POST', body: 'hello body' });
    const report = (await response.json()) as Record<string, unknown>;
    expect(report).toMatchObject({
      method: 'POST',
      bodyLength: 10,
      body: 'hello body',
      protocol: 'HTTP/1.1',
    });
  });

  it('answers h2c with prior knowledge on the same port', async () => {
    const answer = await h2c(origin, '/h2?y=2', { method: 'PUT', body: 'h2 body' });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-backend-instance']).toBe('b1');
    const report = json(answer);
    expect(report).toMatchObject({
      protocol: 'HTTP/2',
      method: 'PUT',
      path: '/h2?y=2',
      host: `127.0.0.2:${backend.port}`,
      body: 'h2 body',
    });
    expect(Object.keys(report['headers'] as object).some((name) => name.startsWith(':'))).toBe(false);
  });

  it('serves curl over HTTP/1.1 and over HTTP/2 prior knowledge', async () => {
    const plain = await curl(['--write-out', '\n%{http_version}', `${origin}/curl`]);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout.trim().endsWith('\n1.1')).toBe(true);
    expect(plain.stdout).toContain('"protocol": "HTTP/1.1"');

    const h2 = await curl(['--http2-prior-knowledge', '--write-out', '\n%{http_version}', `${origin}/curl`]);
    expect(h2.exitCode).toBe(0);
    expect(h2.stdout.trim().endsWith('\n2')).toBe(true);
    expect(h2.stdout).toContain('"protocol": "HTTP/2"');
  });

  it('answers /healthz with 200 on both protocols', async () => {
    expect((await http1(origin, '/healthz')).status).toBe(200);
    expect((await h2c(origin, '/healthz')).status).toBe(200);
  });

  it('refuses request bodies over 1 MiB with 413', async () => {
    const answer = await http1(origin, '/big', { method: 'POST', body: 'x'.repeat((1 << 20) + 1) });
    expect(answer.status).toBe(413);
  });
});

describe('echo backend: bad query values are a 400 naming the parameter', () => {
  const cases: [string, string][] = [
    ['delay=5x', 'delay'],
    ['delay=10m', 'limit'],
    ['succeedAfter=1', 'succeedAfter needs uuid'],
    ['uuid=u&succeedAfter=abc', 'succeedAfter'],
    ['uuid=u&succeedAfter=1&responseCode=99', 'responseCode'],
    ['uuid=u&succeedAfter=1&mode=bogus', 'mode'],
    ['uuid=u&succeedAfter=1&mode=refuse', 'mode=refuse needs HTTP/2'],
    ['uuid=u&succeedAfter=1&mode=reset&responseCode=500', 'responseCode cannot be combined'],
    ['uuid=u&succeedAfter=1&succeedAfter=2', 'given 2 times'],
    ['responseCode=500', 'responseCode needs succeedAfter'],
    [`uuid=${'x'.repeat(129)}`, 'uuid'],
  ];
  it.each(cases)('%s', async (query, message) => {
    const answer = await http1(origin, `/bad?${query}`);
    expect(answer.status).toBe(400);
    expect(json(answer)['error']).toContain(message);
  });

  it('rejects an HTTP/2 responseCode outside 200-599', async () => {
    const answer = await h2c(origin, `/bad?uuid=${uuid()}&succeedAfter=1&responseCode=600`);
    expect(answer.status).toBe(400);
  });
});

describe('echo backend: succeedAfter', () => {
  it('fails the first N attempts with responseCode, then succeeds (conformance meaning)', async () => {
    const id = uuid();
    const statuses: number[] = [];
    const attempts: (string | string[] | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await http1(origin, `/retry?uuid=${id}&succeedAfter=2&responseCode=503`);
      statuses.push(answer.status);
      attempts.push(answer.headers['x-backend-attempt']);
    }
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect(attempts).toEqual(['1', '2', '3', '4']);
  });

  it('succeedAfter=0 never fails; attempts are still counted', async () => {
    const id = uuid();
    const answer = await http1(origin, `/retry?uuid=${id}&succeedAfter=0&responseCode=500`);
    expect(answer.status).toBe(200);
    expect(json(answer)['attempt']).toBe(1);
  });

  it('without responseCode a failing HTTP/1.1 attempt resets the connection', async () => {
    const id = uuid();
    await expect(http1(origin, `/retry?uuid=${id}&succeedAfter=1`)).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
    expect((await http1(origin, `/retry?uuid=${id}&succeedAfter=1`)).status).toBe(200);
    const { attempts } = await attemptsOf(id);
    expect(attempts.map((a) => [a.outcome, a.failed])).toEqual([
      ['reset', true],
      ['response', false],
    ]);
  });

  it('mode=reset on curl shows a transport error, not a status', async () => {
    const result = await curl([
      '--output',
      '/dev/null',
      `${origin}/retry?uuid=${uuid()}&succeedAfter=1&mode=reset`,
    ]);
    expect(result.exitCode).toBe(56);
  });

  it('mode=reset over HTTP/2 resets only the stream (INTERNAL_ERROR)', async () => {
    const id = uuid();
    const failure = await h2c(origin, `/retry?uuid=${id}&succeedAfter=1&mode=reset`).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StreamResetError);
    expect((failure as StreamResetError).code).toBe(2);
    expect((await h2c(origin, `/retry?uuid=${id}&succeedAfter=1&mode=reset`)).status).toBe(200);
  });

  it('mode=refuse over HTTP/2 refuses the stream (REFUSED_STREAM)', async () => {
    const failure = await h2c(origin, `/retry?uuid=${uuid()}&succeedAfter=1&mode=refuse`).catch(
      (e: unknown) => e,
    );
    expect((failure as StreamResetError).code).toBe(7);
  });

  it('counts attempts across backends that share a ledger', async () => {
    const ledger = new AttemptLedger();
    const b2 = await startEchoBackend({ address: '127.0.0.3', name: 'b2', ledger });
    const b3 = await startEchoBackend({ address: '127.0.0.4', name: 'b3', ledger });
    try {
      const id = uuid();
      const query = `/retry?uuid=${id}&succeedAfter=1&responseCode=500`;
      const first = await http1(`http://127.0.0.3:${b2.port}`, query);
      const second = await http1(`http://127.0.0.4:${b3.port}`, query);
      expect([first.status, first.headers['x-backend-instance']]).toEqual([500, 'b2']);
      expect([second.status, json(second)['instance'], json(second)['attempt']]).toEqual([200, 'b3', 2]);
      const { attempts } = json<{ attempts: AttemptRecord[] }>(
        await http1(`http://127.0.0.3:${b2.port}`, `/__attempts?uuid=${id}`),
      );
      expect(attempts.map((a) => a.instance)).toEqual(['b2', 'b3']);
    } finally {
      await Promise.all([b2.close(), b3.close()]);
    }
  });
});

describe('echo backend: delays and attempt timings', () => {
  it('delayRetry slows failing attempts only', async () => {
    const id = uuid();
    const query = `/slow?uuid=${id}&succeedAfter=1&responseCode=500&delayRetry=150ms`;
    expect((await http1(origin, query)).status).toBe(500);
    expect((await http1(origin, query)).status).toBe(200);
    // Timed by the backend's own ledger (arrival to answer), not around the client: the
    // succeeding attempt is answered with no timer in between, so far within the 150 ms it skips.
    const { attempts } = await attemptsOf(id);
    const took = attempts.map((a) => (a.endedAtMs ?? Infinity) - a.arrivedAtMs);
    expect(took[0]).toBeGreaterThanOrEqual(148);
    expect(took[1]).toBeLessThan(150);
  });

  it('delay slows every answer', async () => {
    const started = performance.now();
    expect((await h2c(origin, '/slow?delay=0.12s')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(118);
  });

  it('a client that gives up during a delay leaves an aborted attempt (per-try timeout at the backend)', async () => {
    // The shape of the GEP-1731 conformance case "backendRequest 200ms, attempts 2, succeedAfter 2 → 200",
    // played by a client with a 200 ms per-try timeout: two attempts time out, the third answers at once.
    // The failing attempts' delay is 2 s, not the case's 300 ms: client and backend share this
    // process's event loop, and a stall of 100 ms under load let both timers fire in one turn, the
    // backend's answer going out before it saw the client close (seen in a flake hunt). The delay
    // ends early on the close, so the test takes no longer.
    const id = uuid();
    const query = `/retry?uuid=${id}&succeedAfter=2&responseCode=500&delayRetry=2s`;
    const tryOnce = (): Promise<number> =>
      http1(origin, query, { signal: AbortSignal.timeout(200) }).then(
        (answer) => answer.status,
        () => 504,
      );
    expect([await tryOnce(), await tryOnce(), await tryOnce()]).toEqual([504, 504, 200]);
    const { attempts } = await attemptsOf(id);
    expect(attempts.map((a) => [a.attempt, a.failed, a.outcome, a.status])).toEqual([
      [1, true, 'aborted', null],
      [2, true, 'aborted', null],
      [3, false, 'response', 200],
    ]);
    // 'aborted' means ended when the client gave up: the backend records it only when the
    // exchange closes before its delay has run out (a delay that ran out answers 500).
    const first = attempts[0] as AttemptRecord;
    expect(first.endedAtMs).not.toBeNull();
  });

  it('records arrival and end times so backoff gaps can be measured at the backend', async () => {
    const id = uuid();
    const query = `/timed?uuid=${id}&succeedAfter=2&responseCode=502&delayRetry=20ms`;
    const before = performance.timeOrigin + performance.now();
    for (let i = 0; i < 3; i++) {
      await http1(origin, query);
      if (i < 2) await new Promise((resolve) => setTimeout(resolve, 80));
    }
    const after = performance.timeOrigin + performance.now();
    const { count, attempts } = await attemptsOf(id);
    expect(count).toBe(3);
    expect(attempts.map((a) => [a.attempt, a.status, a.failed, a.outcome])).toEqual([
      [1, 502, true, 'response'],
      [2, 502, true, 'response'],
      [3, 200, false, 'response'],
    ]);
    for (const a of attempts) {
      expect(a.arrivedAtMs).toBeGreaterThanOrEqual(before);
      expect(a.endedAtMs).toBeLessThanOrEqual(after);
      expect(a.endedAtMs ?? 0).toBeGreaterThanOrEqual(a.arrivedAtMs);
      expect(a.instance).toBe('b1');
    }
    const first = attempts[0] as AttemptRecord;
    const second = attempts[1] as AttemptRecord;
    expect((first.endedAtMs ?? 0) - first.arrivedAtMs).toBeGreaterThanOrEqual(18);
    expect(second.arrivedAtMs - (first.endedAtMs ?? 0)).toBeGreaterThanOrEqual(78);
    expect(Number.isInteger(first.arrivedAtMs)).toBe(false);
  });

  it('/__attempts needs a uuid and is empty for an unknown one', async () => {
    expect((await http1(origin, '/__attempts')).status).toBe(400);
    expect(await attemptsOf(uuid())).toEqual({ uuid: expect.any(String), count: 0, attempts: [] });
  });
});

describe('echo backend: start options', () => {
  it.each([
    [{ address: '10.0.0.1' }, 'loopback'],
    [{ address: 'localhost' }, 'loopback'],
    [{ address: '127.0.0.2', port: 70000 }, '0-65535'],
    [{ address: '127.0.0.2', name: 'bad name' }, 'name'],
  ])('rejects %o', async (options, message) => {
    await expect(startEchoBackend(options)).rejects.toThrow(message);
  });

  it('close() is idempotent and frees the port', async () => {
    const b = await startEchoBackend({ address: '127.0.0.3' });
    const url = `http://127.0.0.3:${b.port}/healthz`;
    expect((await http1(url, '/healthz')).status).toBe(200);
    await Promise.all([b.close(), b.close()]);
    await expect(http1(url, '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
