// `node dist/bench/rerender-results.js [file]`: rebuilds the summary, goals, table, chart
// and README section of a recorded run from its raw measurements (bench/results/latest.json
// by default), for when the summary code changes and the measurements do not.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { goals, variantReports, type BenchReport } from './bench-report.js';
import type { Measurement } from './measure-variant.js';
import { writeResults } from './results-files.js';
import { resultsTable } from './results-table.js';
import type { Variant, VariantId } from './variants.js';

const root = projectRoot();
const file = process.argv[2] ?? join(root, 'bench', 'results', 'latest.json');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
// JSON wrote Infinity (a rate not kept) as null; in a latency it can mean nothing else.
const unbounded = (x: number | null): number => (x === null ? Infinity : x);
const measurements: Measurement[] = recorded.measurements.map((m) => ({
  ...m,
  latency: {
    ...m.latency,
    p50Us: unbounded(m.latency.p50Us),
    p90Us: unbounded(m.latency.p90Us),
    p99Us: unbounded(m.latency.p99Us),
    maxUs: unbounded(m.latency.maxUs),
    fromDueP50Us: unbounded(m.latency.fromDueP50Us),
    fromDueP99Us: unbounded(m.latency.fromDueP99Us),
  },
}));
const variants: Variant[] = Object.entries(recorded.variants).map(([id, v]) => ({
  id: id as VariantId,
  name: v.name,
  description: v.description,
}));
const report: BenchReport = {
  ...recorded,
  variants: variantReports(variants, measurements, recorded.rounds),
};
const withGoals: BenchReport = { ...report, goals: goals(report.variants) };
const table = resultsTable(withGoals);
console.log(table);
const label = /\/\d{4}-\d{2}-\d{2}-([a-z0-9-]+)\.json$/.exec(file)?.[1];
for (const line of writeResults(root, withGoals, table, label)) console.log(line);
