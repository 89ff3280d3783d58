// Medians and spreads over rounds, and ratios to plain Envoy taken round by round (each
// round measures every variant close together in time, so a ratio within a round cancels
// most of what the machine's other work does to both).

export interface Spread {
  readonly median: number | null;
  readonly min: number | null;
  readonly max: number | null;
}

export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * Median, min and max of the rounds' values. A value that is Infinity (a latency run that
 * could not keep its rate) stays in: if half the rounds are, the median is null (unbounded).
 */
export function spread(xs: ReadonlyArray<number | undefined>): Spread {
  const known = xs.filter((x): x is number => x !== undefined && !Number.isNaN(x));
  if (known.length === 0) return { median: null, min: null, max: null };
  const s = [...known].sort((a, b) => a - b);
  const nullIfInfinite = (x: number | undefined): number | null =>
    x === undefined || !Number.isFinite(x) ? null : x;
  return {
    median: nullIfInfinite(median(s) ?? undefined),
    min: nullIfInfinite(s[0]),
    max: nullIfInfinite(s[s.length - 1]),
  };
}

/** The median over rounds of `variant[r] / base[r]`. */
export function medianRatio(
  variant: ReadonlyArray<number | undefined>,
  base: ReadonlyArray<number | undefined>,
): number | null {
  const ratios: number[] = [];
  for (let r = 0; r < Math.min(variant.length, base.length); r++) {
    const v = variant[r];
    const b = base[r];
    if (v !== undefined && b !== undefined && Number.isFinite(v) && Number.isFinite(b) && b > 0)
      ratios.push(v / b);
  }
  return median(ratios);
}

/**
 * The median over rounds of `variant[r] − base[r]`. A round where only one side kept its
 * rate (Infinity) counts as ±Infinity; a round where neither did is left out. Null when
 * the median itself is unbounded or there is no round to compare.
 */
export function medianDifference(
  variant: ReadonlyArray<number | undefined>,
  base: ReadonlyArray<number | undefined>,
): number | null {
  const diffs: number[] = [];
  for (let r = 0; r < Math.min(variant.length, base.length); r++) {
    const v = variant[r];
    const b = base[r];
    if (v === undefined || b === undefined || Number.isNaN(v) || Number.isNaN(b)) continue;
    if (!Number.isFinite(v) && !Number.isFinite(b)) continue;
    diffs.push(v - b);
  }
  const m = median(diffs);
  return m === null || !Number.isFinite(m) ? null : m;
}
