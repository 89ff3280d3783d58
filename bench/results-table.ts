// The result as a markdown table (bench/results/latest.md and README.md's Performance section).
import type { BenchReport, VariantReport } from './bench-report.js';
import type { Spread } from './round-stats.js';

const n = (x: number | null | undefined, digits = 0): string =>
  x === null || x === undefined
    ? '—'
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const range = (s: Spread | undefined, digits = 0): string =>
  s?.min == null || s.max == null ? '' : ` (${n(s.min, digits)}–${n(s.max, digits)})`;

const latency = (v: VariantReport, key: 'p50_us' | 'p90_us' | 'p99_us'): string =>
  v[key] === null && v.spread[key]?.min !== undefined ? '∞ (rate not kept)' : n(v[key]);

const ratio = (x: number | null): string => (x === null ? '—' : `×${x.toFixed(2)}`);

function cpu(v: VariantReport): string {
  if (v.cpu_us_per_req === null) return '—';
  const parts = v.control_cpu_us_per_req
    ? ` (${n(v.envoy_cpu_us_per_req, 1)} + ${n(v.control_cpu_us_per_req, 1)})`
    : '';
  return `${n(v.cpu_us_per_req, 1)}${parts}`;
}

/** How busy the machine was with other work: results from a busy machine are rough. */
function machineNote(r: BenchReport): string {
  const others = Object.values(r.variants)
    .map((v) => v.others_cpu_percent)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  const mid = others[others.length >> 1];
  return (
    `Load average ${r.machine['loadavg_1m_at_start']} at the start and ${r.machine['loadavg_1m_at_end']} at the end; ` +
    `other programs used a median ${mid === undefined ? '?' : mid.toFixed(0)}% of the machine during the latency runs ` +
    `(\`others_cpu_percent\`).`
  );
}

export function resultsTable(r: BenchReport): string {
  const rate = r.method['latency_rate_rps'];
  const lines = [
    `Measured ${r.date} on ${r.machine['cpu_model']} (${r.machine['nproc']} CPUs), Envoy ${r.envoy}, ` +
      `${r.rounds} interleaved rounds; medians, with the min–max over rounds in brackets. ` +
      `Latency at a fixed ${n(Number(rate))} requests/s (${r.method['latency_rate_percent']}% of plain Envoy's best throughput) from an open-loop ` +
      `client: a request that waited for a connection counts from when it was due. CPU: Envoy's ` +
      `(+ the control service's) per request under full load.`,
    '',
    machineNote(r),
    '',
    '| | setup | requests/s | vs V1 | p50 µs | p90 µs | p99 µs | p50 vs V1 | CPU µs/req | vs V1 |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [id, v] of Object.entries(r.variants)) {
    const delta = v.vs_v1.p50_delta_us;
    lines.push(
      `| ${id} | ${v.name} | ${n(v.rps)}${range(v.spread['rps'])} | ${ratio(v.vs_v1.rps)} | ` +
        `${latency(v, 'p50_us')}${range(v.spread['p50_us'])} | ${latency(v, 'p90_us')} | ${latency(v, 'p99_us')} | ` +
        `${delta === null ? '—' : `${delta >= 0 ? '+' : ''}${n(delta)} µs`} | ${cpu(v)} | ${ratio(v.vs_v1.cpu_us_per_req)} |`,
    );
  }
  const vsRef = Object.entries(r.variants).filter(([, v]) => v.control_cpu_vs_v9 != null);
  if (vsRef.length > 0) {
    lines.push(
      '',
      "The control service's CPU per request against the reference ext_proc server's (V9), median of per-round ratios: " +
        vsRef.map(([id, v]) => `${id} ${ratio(v.control_cpu_vs_v9)}`).join(', ') +
        '.',
    );
  }
  lines.push('', '| goal | measured | met |', '|---|---|---|');
  for (const g of r.goals)
    lines.push(`| ${g.goal} | ${g.measured} | ${g.met === null ? '—' : g.met ? 'yes' : 'no'} |`);
  lines.push(
    '',
    'The filter alone, in the proxy-wasm emulator (no load; `filter` in latest.json):',
    '',
    '| request | host calls | ns in the filter | ns with the emulator |',
    '|---|---:|---:|---:|',
  );
  for (const f of r.filter)
    lines.push(
      `| ${f.name} | ${n(f.hostCallsPerRequest, 1)} | ${n(f.wasmNsPerRequest)} | ${n(f.nsPerRequest)} |`,
    );
  return `${lines.join('\n')}\n`;
}
