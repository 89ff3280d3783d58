// The result as an SVG chart, written by hand: throughput, CPU per request and latency
// per variant, each bar the median over rounds with a line for the min–max.
import type { BenchReport, VariantReport } from './bench-report.js';

const W = 980;
const H = 340;
const PANEL_W = 300;
const PLOT_TOP = 56;
const PLOT_H = 220;
const GAP = 30;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × a power of ten) at or above x. */
export function niceMax(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

interface Bar {
  readonly label: string;
  /** Stacked segments from the bottom, with their colours. */
  readonly segments: ReadonlyArray<{ value: number; color: string }>;
  readonly min?: number | null;
  readonly max?: number | null;
  /** Extra tick marks (e.g. p90, p99), with a short label. */
  readonly marks?: ReadonlyArray<{ value: number | null; label: string }>;
  /** Shown instead of a bar when there is no value. */
  readonly missing?: string;
}

function panel(x0: number, title: string, unit: string, bars: readonly Bar[]): string {
  const values = bars.flatMap((b) => [
    b.segments.reduce((a, s) => a + s.value, 0),
    b.max ?? 0,
    ...(b.marks ?? []).map((m) => m.value ?? 0),
  ]);
  const top = niceMax(Math.max(...values));
  const y = (v: number): number => PLOT_TOP + PLOT_H - (Math.min(v, top) / top) * PLOT_H;
  const out: string[] = [];
  out.push(`<text x="${x0}" y="24" class="title">${esc(title)}</text>`);
  out.push(`<text x="${x0}" y="42" class="unit">${esc(unit)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    out.push(`<line x1="${x0 + 40}" x2="${x0 + PANEL_W}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`);
    out.push(
      `<text x="${x0 + 36}" y="${y(v) + 4}" class="axis" text-anchor="end">${Number(v.toPrecision(3)).toLocaleString('en-US')}</text>`,
    );
  }
  const slot = (PANEL_W - 48) / bars.length;
  bars.forEach((b, i) => {
    const cx = x0 + 48 + slot * i + slot / 2;
    const bw = slot * 0.6;
    out.push(
      `<text x="${cx}" y="${PLOT_TOP + PLOT_H + 16}" class="axis" text-anchor="middle">${esc(b.label)}</text>`,
    );
    if (b.segments.length === 0) {
      if (b.missing)
        out.push(
          `<text x="${cx}" y="${PLOT_TOP + PLOT_H - 6}" class="axis" text-anchor="middle">${esc(b.missing)}</text>`,
        );
      return;
    }
    let base = 0;
    for (const s of b.segments) {
      out.push(
        `<rect x="${cx - bw / 2}" y="${y(base + s.value)}" width="${bw}" height="${y(base) - y(base + s.value)}" fill="${s.color}"/>`,
      );
      base += s.value;
    }
    if (b.min != null && b.max != null) {
      out.push(`<line x1="${cx}" x2="${cx}" y1="${y(b.min)}" y2="${y(b.max)}" class="whisker"/>`);
      out.push(`<line x1="${cx - 4}" x2="${cx + 4}" y1="${y(b.max)}" y2="${y(b.max)}" class="whisker"/>`);
      out.push(`<line x1="${cx - 4}" x2="${cx + 4}" y1="${y(b.min)}" y2="${y(b.min)}" class="whisker"/>`);
    }
    for (const m of b.marks ?? []) {
      if (m.value === null) {
        out.push(`<text x="${cx}" y="${PLOT_TOP - 2}" class="axis" text-anchor="middle">∞</text>`);
        continue;
      }
      out.push(
        `<line x1="${cx - bw / 2}" x2="${cx + bw / 2}" y1="${y(m.value)}" y2="${y(m.value)}" class="mark"/>`,
      );
      out.push(`<text x="${cx + bw / 2 + 2}" y="${y(m.value) + 3}" class="tiny">${esc(m.label)}</text>`);
    }
  });
  return out.join('\n');
}

const BASE = '#7a8896';
const STEADFAST = '#d9822b';
const NATIVE = '#3f8f5f';
const CONTROL = '#8e5bb5';

function colorOf(id: string): string {
  if (id === 'V4' || id === 'V4r') return NATIVE;
  if (id === 'V0' || id === 'V1') return BASE;
  return STEADFAST;
}

export function resultsChart(r: BenchReport): string {
  const entries = Object.entries(r.variants) as Array<[string, VariantReport]>;
  const throughput: Bar[] = entries.map(([id, v]) => ({
    label: id,
    segments: v.rps === null ? [] : [{ value: v.rps, color: colorOf(id) }],
    min: v.spread['rps']?.min,
    max: v.spread['rps']?.max,
  }));
  const cpu: Bar[] = entries.map(([id, v]) => ({
    label: id,
    segments:
      v.envoy_cpu_us_per_req === null
        ? []
        : [
            { value: v.envoy_cpu_us_per_req, color: colorOf(id) },
            ...(v.control_cpu_us_per_req ? [{ value: v.control_cpu_us_per_req, color: CONTROL }] : []),
          ],
    min: v.spread['cpu_us_per_req']?.min,
    max: v.spread['cpu_us_per_req']?.max,
    missing: id === 'V0' ? 'no Envoy' : 'n/a',
  }));
  const latency: Bar[] = entries.map(([id, v]) => ({
    label: id,
    segments: v.p50_us === null ? [] : [{ value: v.p50_us, color: colorOf(id) }],
    min: v.spread['p50_us']?.min,
    max: v.spread['p50_us']?.max,
    marks: [
      { value: v.p90_us, label: '90' },
      { value: v.p99_us, label: '99' },
    ],
    missing: '∞',
  }));
  const rate = Number(r.method['latency_rate_rps']).toLocaleString('en-US', { maximumFractionDigits: 0 });
  const legend = [
    [BASE, 'backend / plain Envoy'],
    [STEADFAST, 'steadfast'],
    [NATIVE, 'Envoy native retry + session'],
    [CONTROL, 'control service (attach mode)'],
  ]
    .map(
      ([c, t], i) =>
        `<rect x="${10 + i * 230}" y="${H - 22}" width="10" height="10" fill="${c}"/><text x="${26 + i * 230}" y="${H - 13}" class="axis">${esc(t as string)}</text>`,
    )
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif">
<style>
.title { font-size: 14px; font-weight: 600; fill: #222; }
.unit { font-size: 11px; fill: #555; }
.axis { font-size: 10px; fill: #444; }
.tiny { font-size: 8px; fill: #444; }
.grid { stroke: #ddd; stroke-width: 1; }
.whisker { stroke: #222; stroke-width: 1.2; }
.mark { stroke: #222; stroke-width: 1.5; stroke-dasharray: 3 2; }
</style>
<rect width="100%" height="100%" fill="#fff"/>
${panel(10, 'Throughput', 'requests/s (wrk), more is better', throughput)}
${panel(10 + PANEL_W + GAP, 'CPU per request', 'µs, Envoy + control service, less is better', cpu)}
${panel(10 + 2 * (PANEL_W + GAP), `Latency at ${rate} req/s`, 'µs: bar p50, dashes p90 and p99', latency)}
${legend}
</svg>
`;
}
