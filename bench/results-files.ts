// Writes a run's result: bench/results/latest.{json,md,svg}, a dated copy, and the table
// in README.md's Performance section (between its bench:results markers).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport } from './bench-report.js';
import { resultsChart } from './results-chart.js';

export function writeResults(root: string, report: BenchReport, table: string, label?: string): string[] {
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  // JSON has no Infinity: a latency the setup could not keep is null.
  const json = `${JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`;
  const day = report.date.slice(0, 10);
  if (label !== undefined) {
    // A labelled run is an extra data point: it leaves latest.* and the README alone.
    writeFileSync(join(dir, `${day}-${label}.json`), json);
    writeFileSync(join(dir, `${day}-${label}.md`), table);
    return [`wrote bench/results/${day}-${label}.{json,md}`];
  }
  writeFileSync(join(dir, 'latest.json'), json);
  writeFileSync(join(dir, `${day}.json`), json);
  writeFileSync(join(dir, 'latest.md'), table);
  writeFileSync(join(dir, 'latest.svg'), resultsChart(report));
  const readme = join(root, 'README.md');
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- bench:results:start -->';
  const end = '<!-- bench:results:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a !== -1 && b > a) {
    const section = `${start}\n\n${table}\n![benchmark: throughput, CPU per request, latency](bench/results/latest.svg)\n\n${end}`;
    writeFileSync(readme, text.slice(0, a) + section + text.slice(b + end.length));
  }
  return [`wrote bench/results/latest.{json,md,svg} and bench/results/${day}.json`];
}
