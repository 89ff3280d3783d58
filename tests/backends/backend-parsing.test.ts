import { describe, expect, it } from 'vitest';
import { AttemptLedger, finishAttempt } from '../../backends/attempt-ledger.js';
import { parseEchoQuery } from '../../backends/echo/echo-query.js';
import { parseGoDuration } from '../../backends/go-duration.js';
import { listenPort, loopbackAddress } from '../../backends/loopback-endpoint.js';
import { classifyOpening } from '../../backends/protocol-sniffer.js';
import { failsAttempt } from '../../backends/retry-simulation.js';

describe('parseGoDuration', () => {
  it.each([
    ['0', 0],
    ['300ms', 300],
    ['1.5s', 1500],
    ['1m30s', 90_000],
    ['250us', 0.25],
    ['100µs', 0.1],
    ['2000000ns', 2],
    ['.5s', 500],
    ['1s500ms', 1500],
  ])('%s is %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toEqual({ ok: true, ms });
  });

  it.each(['', '5', '5x', 'ms', '-1s', '1s ', ' 1s', '1.2.3s', '3m', 'x'.repeat(65)])(
    'rejects %j',
    (text) => {
      expect(parseGoDuration(text).ok).toBe(false);
    },
  );
});

describe('parseEchoQuery', () => {
  const parse = (query: string, protocol: 'HTTP/1.1' | 'HTTP/2' = 'HTTP/1.1') =>
    parseEchoQuery(new URLSearchParams(query), protocol);

  it('without parameters plans a plain echo', () => {
    expect(parse('')).toEqual({ ok: true, plan: { uuid: null, delayMs: 0, failure: null } });
  });

  it('a failing attempt resets the connection unless a responseCode is given, like the conformance backend', () => {
    expect(parse('uuid=a&succeedAfter=2')).toMatchObject({ ok: true, plan: { failure: { mode: 'reset' } } });
    expect(parse('uuid=a&succeedAfter=2&responseCode=503')).toMatchObject({
      ok: true,
      plan: { failure: { mode: 'status', responseCode: 503, succeedAfter: 2 } },
    });
    expect(parse('uuid=a&succeedAfter=2&mode=status')).toMatchObject({
      ok: true,
      plan: { failure: { mode: 'status', responseCode: 500 } },
    });
  });

  it('reads delay and delayRetry as Go durations', () => {
    expect(parse('uuid=a&succeedAfter=1&responseCode=500&delayRetry=300ms&delay=1s')).toMatchObject({
      ok: true,
      plan: { uuid: 'a', delayMs: 1000, failure: { delayRetryMs: 300 } },
    });
  });

  it('ignores parameters it does not know', () => {
    expect(parse('foo=bar&uuid=a')).toMatchObject({ ok: true, plan: { uuid: 'a' } });
  });

  it('allows mode=refuse over HTTP/2 only', () => {
    expect(parse('uuid=a&succeedAfter=1&mode=refuse', 'HTTP/2')).toMatchObject({ ok: true });
    expect(parse('uuid=a&succeedAfter=1&mode=refuse', 'HTTP/1.1')).toMatchObject({ ok: false });
  });

  it('allows response codes above 599 on HTTP/1.1 only', () => {
    expect(parse('uuid=a&succeedAfter=1&responseCode=600', 'HTTP/1.1')).toMatchObject({ ok: true });
    expect(parse('uuid=a&succeedAfter=1&responseCode=600', 'HTTP/2')).toMatchObject({ ok: false });
  });
});

describe('failsAttempt', () => {
  it('fails attempts 1..N and passes N+1 onward', () => {
    expect([1, 2, 3, 4].map((attempt) => failsAttempt(attempt, 2))).toEqual([true, true, false, false]);
    expect(failsAttempt(1, 0)).toBe(false);
  });
});

describe('AttemptLedger', () => {
  const start = { instance: 'i', protocol: 'HTTP/1.1', method: 'GET' };

  it('numbers attempts per uuid', () => {
    const ledger = new AttemptLedger();
    expect([
      ledger.begin('a', start).attempt,
      ledger.begin('b', start).attempt,
      ledger.begin('a', start).attempt,
    ]).toEqual([1, 1, 2]);
  });

  it('forgets the least recently used uuid beyond maxKeys', () => {
    const ledger = new AttemptLedger({ maxKeys: 2 });
    ledger.begin('a', start);
    ledger.begin('b', start);
    ledger.begin('a', start);
    ledger.begin('c', start);
    expect(ledger.size).toBe(2);
    expect(ledger.count('b')).toBe(0);
    expect(ledger.count('a')).toBe(2);
  });

  it('keeps counting beyond the recorded attempts', () => {
    const ledger = new AttemptLedger({ maxRecordsPerKey: 2 });
    for (let i = 0; i < 5; i++) ledger.begin('a', start);
    expect(ledger.count('a')).toBe(5);
    expect(ledger.attempts('a')).toHaveLength(2);
  });

  it('keeps the first ending of an attempt', () => {
    const ledger = new AttemptLedger();
    const record = ledger.begin('a', start);
    finishAttempt(record, 'response', 500);
    finishAttempt(record, 'aborted', null);
    expect(ledger.attempts('a')[0]).toMatchObject({ outcome: 'response', status: 500 });
  });
});

describe('classifyOpening', () => {
  const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
  it.each([
    ['P', null],
    ['PRI * HTTP/2', null],
    [preface, 'h2c'],
    [`${preface}\x00\x00`, 'h2c'],
    ['GET / HTTP/1.1\r\n', 'http1'],
    ['PRINT', 'http1'],
    ['POST /', 'http1'],
  ])('%j is %s', (opening, expected) => {
    expect(classifyOpening(Buffer.from(opening, 'latin1'))).toBe(expected);
  });
});

describe('loopback endpoints', () => {
  it('accepts 127.0.0.0/8 and ports 0-65535', () => {
    expect(loopbackAddress('127.0.0.4')).toBe('127.0.0.4');
    expect(listenPort('0')).toBe(0);
    expect(listenPort(65535)).toBe(65535);
  });

  it.each(['0.0.0.0', '::1', '128.0.0.1', '127.0.0', '127.0.0.256'])('rejects address %s', (address) => {
    expect(() => loopbackAddress(address)).toThrow('loopback');
  });

  it.each(['-1', '65536', '80a', '', 1.5])('rejects port %j', (port) => {
    expect(() => listenPort(port)).toThrow('0-65535');
  });
});
