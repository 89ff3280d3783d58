// bench:scale's result as an SVG chart, written by hand: for each mode, against the number of
// routes (logarithmic), the time until the last route is served, the time one changed route
// takes (the slowest of added, edited, deleted), and the peak memory (control service + Envoy).
import { niceMax } from './results-chart.js';
import type { ScaleRow } from './scale-row.js';

const W = 1000;
const H = 330;
const PANEL_W = 290;
const GAP = 40;
const LEFT = 50;
const TOP = 56;
const PLOT_H = 210;

const MODES = [
  { mode: 'gateway', color: '#1f77b4', label: 'gateway mode (steadfast dev)' },
  { mode: 'attach', color: '#ff7f0e', label: 'attach mode (steadfast serve)' },
] as const;

interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly value: (r: ScaleRow) => number;
  /** A goal line (issue 20's, at 10,000 routes), when there is one. */
  readonly goal?: { readonly value: number; readonly label: string };
}

function panel(x0: number, p: Panel, rows: readonly ScaleRow[], sizes: readonly number[]): string {
  const values = rows.map(p.value).filter((v) => Number.isFinite(v));
  const top = niceMax(Math.max(...values, p.goal?.value ?? 0));
  const logMin = Math.log10(Math.min(...sizes));
  const logMax = Math.log10(Math.max(...sizes));
  const x = (n: number): number =>
    x0 + LEFT + (logMax === logMin ? 0 : ((Math.log10(n) - logMin) / (logMax - logMin)) * (PANEL_W - LEFT));
  const y = (v: number): number => TOP + PLOT_H - (Math.min(v, top) / top) * PLOT_H;
  const out = [
    `<text x="${x0 + LEFT}" y="${TOP - 18}" font-size="13" font-weight="bold">${p.title}</text>`,
    `<line x1="${x0 + LEFT}" y1="${TOP}" x2="${x0 + LEFT}" y2="${TOP + PLOT_H}" stroke="#888"/>`,
    `<line x1="${x0 + LEFT}" y1="${TOP + PLOT_H}" x2="${x0 + PANEL_W}" y2="${TOP + PLOT_H}" stroke="#888"/>`,
  ];
  for (const f of [0, 0.5, 1]) {
    const v = top * f;
    out.push(
      `<text x="${x0 + LEFT - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${Number(v.toPrecision(3))} ${p.unit}</text>`,
      `<line x1="${x0 + LEFT}" y1="${y(v)}" x2="${x0 + PANEL_W}" y2="${y(v)}" stroke="#eee"/>`,
    );
  }
  for (const n of sizes) {
    out.push(
      `<text x="${x(n)}" y="${TOP + PLOT_H + 16}" font-size="10" text-anchor="middle">${n.toLocaleString('en')}</text>`,
    );
  }
  out.push(
    `<text x="${x0 + LEFT + (PANEL_W - LEFT) / 2}" y="${TOP + PLOT_H + 32}" font-size="10" text-anchor="middle">routes</text>`,
  );
  if (p.goal) {
    out.push(
      `<line x1="${x0 + LEFT}" y1="${y(p.goal.value)}" x2="${x0 + PANEL_W}" y2="${y(p.goal.value)}" stroke="#2ca02c" stroke-dasharray="4 3"/>`,
      `<text x="${x0 + PANEL_W}" y="${y(p.goal.value) - 4}" font-size="10" text-anchor="end" fill="#2ca02c">${p.goal.label}</text>`,
    );
  }
  for (const m of MODES) {
    const points = rows
      .filter((r) => r.mode === m.mode && Number.isFinite(p.value(r)))
      .sort((a, b) => a.routes - b.routes)
      .map((r) => [x(r.routes), y(p.value(r))] as const);
    if (points.length === 0) continue;
    out.push(
      `<polyline fill="none" stroke="${m.color}" stroke-width="2" points="${points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`,
      ...points.map(
        ([a, b]) => `<circle cx="${a.toFixed(1)}" cy="${b.toFixed(1)}" r="3" fill="${m.color}"/>`,
      ),
    );
  }
  return out.join('\n');
}

export function scaleChart(rows: readonly ScaleRow[], caption: string): string {
  const sizes = [...new Set(rows.map((r) => r.routes))].sort((a, b) => a - b);
  const panels: Panel[] = [
    {
      title: 'last route served',
      unit: 's',
      value: (r) => r.readySeconds,
      goal: { value: 10, label: 'dev goal 10 s' },
    },
    {
      title: 'one route changed → served',
      unit: 's',
      value: (r) => Math.max(r.addSeconds, r.editSeconds, r.deleteSeconds),
      goal: { value: 1, label: 'goal 1 s' },
    },
    {
      title: 'peak memory (control + Envoy)',
      unit: 'MiB',
      value: (r) => r.controlPeakMiB + (r.envoyPeakMiB ?? 0),
      goal: { value: 256, label: 'serve goal 256 MB' },
    },
  ];
  const legend = MODES.map(
    (m, i) =>
      `<rect x="${20 + i * 260}" y="${H - 22}" width="12" height="12" fill="${m.color}"/>` +
      `<text x="${38 + i * 260}" y="${H - 12}" font-size="11">${m.label}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="20" y="20" font-size="12" fill="#444">${caption.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text>`,
    ...panels.map((p, i) => panel(10 + i * (PANEL_W + GAP), p, rows, sizes)),
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** The chart's caption: when, where, how many CPUs, which Envoy. */
export function scaleCaption(report: {
  readonly date: string;
  readonly machine: { readonly cpus: number; readonly envoy: string };
  readonly provider?: string;
}): string {
  const from = report.provider === 'kubernetes' ? ', objects from a Kubernetes API server' : '';
  return `bench:scale${from}, ${report.date.slice(0, 16).replace('T', ' ')} UTC, ${report.machine.cpus} CPUs, Envoy ${report.machine.envoy}`;
}
