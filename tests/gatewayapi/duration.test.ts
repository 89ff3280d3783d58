// GEP-2257 durations, with the GEP's own valid and invalid examples rephrased.
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../extproc/src/gatewayapi/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0s', 0],
    ['0h', 0],
    ['1s', 1000],
    ['100ms', 100],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1s500ms', 1500],
    ['1m1m', 120_000],
    ['99999ms', 99_999],
    ['1h1m1s1ms', 3_661_001],
  ])('%s = %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['0', '1', '', '1.5s', '-1s', '1d', '1us', '100000s', '1h1m1s1ms1s', ' 1s', '1S', '1sm'])(
    'rejects %j',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [1500, '1s500ms'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
