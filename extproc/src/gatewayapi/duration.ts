// GEP-2257 durations: `^([0-9]{1,5}(h|m|s|ms)){1,4}$`. Units may repeat and add up
// ("1s500ms", "1m1m"); `0s` is valid, a bare `0` is not.
import { DURATION } from './patterns.js';

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds, or undefined when the text is not a GEP-2257 duration. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/([0-9]+)(ms|h|m|s)/g)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] ?? 0);
  }
  return total;
}

/** A duration shown back to the user in the shortest GEP-2257 form, e.g. 90000 → `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
