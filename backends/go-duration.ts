// Durations in query parameters use Go's time.ParseDuration syntax, as the conformance echo backend does:
// "300ms", "1.5s", "1m30s", "0". Results are milliseconds, bounded so a request cannot park forever.

const unitMs: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const term = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Longest delay a backend accepts: long enough for any timeout test, short enough to bound parked requests. */
export const maxDelayMs = 120_000;

export type DurationResult = { ok: true; ms: number } | { ok: false; message: string };

export function parseGoDuration(text: string): DurationResult {
  if (text.length === 0 || text.length > 64) {
    return {
      ok: false,
      message: `${JSON.stringify(text.slice(0, 64))} is not a duration like 300ms or 1.5s`,
    };
  }
  if (text === '0') return { ok: true, ms: 0 };
  let ms = 0;
  term.lastIndex = 0;
  while (term.lastIndex < text.length) {
    const at = term.lastIndex;
    const match = term.exec(text);
    if (match === null || match.index !== at) {
      return { ok: false, message: `${JSON.stringify(text)} is not a duration like 300ms or 1.5s` };
    }
    ms += Number(match[1]) * (unitMs[match[2] ?? ''] ?? NaN);
  }
  if (!Number.isFinite(ms) || ms > maxDelayMs) {
    return { ok: false, message: `${JSON.stringify(text)} is longer than the ${maxDelayMs / 1000}s limit` };
  }
  return { ok: true, ms };
}
