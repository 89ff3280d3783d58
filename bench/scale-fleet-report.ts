// `bench:scale --fleet`'s tables and result files: bench/results/scale-fleet-latest.{json,md}
// (scale-fleet-kubernetes-latest.* from an API server).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CpuMedians } from './scale-fleet-cpu.js';
import type { ChangeTimes, FleetRow, SentPerChange } from './scale-fleet-row.js';
import { stagesTable } from './scale-fleet-stages.js';

/** A figure; `?` for one not measured (NaN, null once through JSON). */
const fmt = (x: number | null | undefined, digits = 1): string =>
  x === undefined ? '–' : x === null || Number.isNaN(x) ? '?' : x.toFixed(digits);

const bytes = (s: SentPerChange | undefined): string =>
  s === undefined
    ? '–'
    : s.bytes === null || Number.isNaN(s.bytes)
      ? '?'
      : `${Math.round(s.bytes).toLocaleString('en')} B`;

const resources = (s: SentPerChange): string => fmt(s.resources, s.resources % 1 === 0 ? 0 : 1);

const change = (t: ChangeTimes): string => `${fmt(t.median, 2)} / ${fmt(t.p95, 2)} s`;

/** One route changed: how long until both real Envoys serve it, and what each Envoy was sent. */
function changesTable(rows: readonly FleetRow[]): string {
  const lines = [
    '| provider | routes | Envoys | added → on both (median / p95) | edited | deleted | encoded resource bytes per Envoy: added | edited | deleted | resources (added / edited / deleted) | EndpointSlice change: resource bytes |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.provider} | ${r.routes.toLocaleString('en')} | ${r.realEnvoys} + ${r.lightClients} | ` +
        `${change(r.changes.add)} | ${change(r.changes.edit)} | ${change(r.changes.delete)} | ` +
        `${bytes(r.sent.add)} | ${bytes(r.sent.edit)} | ${bytes(r.sent.delete)} | ` +
        `${resources(r.sent.add)} / ${resources(r.sent.edit)} / ${resources(r.sent.delete)} | ${bytes(r.endpointSent)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * From the API server: each change's own request (from sending it to its answer, inside the
 * times above), and what kubectl's process adds around such a request.
 */
function requestsTable(rows: readonly FleetRow[]): string | undefined {
  const kube = rows.filter((r) => r.requests !== undefined);
  if (kube.length === 0) return undefined;
  const lines = [
    "| provider | routes | the change's request, sent → answered (median / p95): create | patch | delete | kubectl patch --dry-run=server, start → exit | the same request sent directly |",
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const ms = (t: ChangeTimes | undefined): string =>
    t === undefined ? '–' : `${fmt(t.median * 1000, 1)} / ${fmt(t.p95 * 1000, 1)} ms`;
  for (const r of kube) {
    const q = r.requests;
    if (q === undefined) continue;
    lines.push(
      `| ${r.provider} | ${r.routes.toLocaleString('en')} | ${ms(q.add)} | ${ms(q.edit)} | ${ms(q.delete)} | ` +
        `${ms(r.kubectl?.kubectl)} | ${ms(r.kubectl?.request)} |`,
    );
  }
  return lines.join('\n');
}

/** Start-up, and an Envoy joining once all settled. */
function startTable(rows: readonly FleetRow[]): string {
  // The status column only where some row came from an API server.
  const kube = rows.some((r) => r.statusSeconds !== undefined);
  const lines = [
    `| provider | routes | /readyz | first Envoy serves all |${kube ? ' status of all routes written |' : ''} control plane peak until then | new Envoy serves all | resource bytes sent to it |`,
    `|---|---:|---:|---:|${kube ? '---:|' : ''}---:|---:|---:|`,
  ];
  for (const r of rows) {
    const status = r.statusSeconds === undefined ? '–' : `+${fmt(r.statusSeconds)} s`;
    lines.push(
      `| ${r.provider} | ${r.routes.toLocaleString('en')} | ${fmt(r.readySeconds)} s | ${fmt(r.firstServedSeconds)} s |` +
        `${kube ? ` ${status} |` : ''} ${fmt(r.readyPeakMiB, 0)} MiB | ${fmt(r.newEnvoySeconds)} s | ${bytes(r.newEnvoySent)} |`,
    );
  }
  return lines.join('\n');
}

/** MiB to two places; – when not measured. */
const fmtMiB = (x: number | undefined): string => (x === undefined ? '–' : fmt(x, 2));

/**
 * Where the machine went during a change: each part's CPU from the change's start until both
 * real Envoys served it, and steadfast's GC in that window (medians of the row's changes).
 */
function cpuTable(r: FleetRow): string | undefined {
  const c = r.cpu;
  if (!c) return undefined;
  const kinds = ['add', 'edit', 'delete'] as const;
  const row = (label: string, f: (m: CpuMedians) => number | string | undefined): string =>
    `| ${label} | ${kinds
      .map((k) => {
        const x = f(c[k]);
        return typeof x === 'string' ? x : fmt(x, 0);
      })
      .join(' | ')} |`;
  const envoys = Math.max(...kinds.map((k) => c[k].cpu.envoys.length));
  const kube = kinds.some((k) => c[k].cpu.apiServer !== undefined);
  return [
    `| ${r.routes.toLocaleString('en')} routes: CPU per change, median ms, from its start until both Envoys serve it | added | edited | deleted |`,
    '|---|---:|---:|---:|',
    row('the window (wall time)', (m) => m.cpu.windowMs),
    row("steadfast's service thread", (m) => m.cpu.service),
    row("steadfast's compiler thread", (m) => m.cpu.compiler),
    row("steadfast's other threads (V8's GC helpers, libuv's pool)", (m) => m.cpu.steadfastOther),
    ...(kube ? [row('kube-apiserver', (m) => m.cpu.apiServer), row('etcd', (m) => m.cpu.etcd)] : []),
    ...Array.from({ length: envoys }, (_, i) => row(`Envoy ${i + 1}`, (m) => m.cpu.envoys[i])),
    row('the benchmark (its polling, the lightweight clients)', (m) => m.cpu.bench),
    row("steadfast's service thread: waiting for a CPU (ready, not running)", (m) => m.cpu.waited?.service),
    row("steadfast's compiler thread: waiting for a CPU", (m) => m.cpu.waited?.compiler),
    ...Array.from({ length: envoys }, (_, i) =>
      row(`Envoy ${i + 1}'s main thread: waiting for a CPU`, (m) => m.cpu.waited?.envoys[i]),
    ),
    row('the rest of the machine (others, the kernel)', (m) => m.others),
    row('the whole machine, every CPU (10 ms resolution)', (m) => m.cpu.machine),
    row("GC pauses on steadfast's service thread", (m) => m.gcMs.service),
    row('changes with a major GC there', (m) => `${m.withMajorGc.service} of ${m.changes}`),
    row(
      "steadfast's service thread: old space (not large objects) grown since the change before (MiB, no major GC between)",
      (m) => fmtMiB(m.oldGrowth?.service),
    ),
    row("GC pauses on steadfast's compiler thread", (m) => m.gcMs.compiler),
    row('changes with a major GC there', (m) => `${m.withMajorGc.compiler} of ${m.changes}`),
    row(
      "steadfast's compiler thread: old space (not large objects) grown since the change before (MiB)",
      (m) => fmtMiB(m.oldGrowth?.compiler),
    ),
  ].join('\n');
}

const mib = (x: number): string => `${fmt(x, 0)} MiB`;

/** The control plane's memory with 1, 2 and all Envoys, its peaks, and the first Envoy's. */
function memoryTable(rows: readonly FleetRow[]): string {
  const lines = [
    '| provider | routes | Envoys | RSS: 1 Envoy | 2 Envoys | all | live heap + external: 1 Envoy | 2 Envoys | all | peak while connecting: 2nd Envoy | the rest | peak during changes | Envoy peak RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const { oneEnvoy: one, twoEnvoys: two, allEnvoys: all } = r.memory;
    lines.push(
      `| ${r.provider} | ${r.routes.toLocaleString('en')} | ${r.realEnvoys} + ${r.lightClients} | ` +
        `${mib(one.rss)} | ${mib(two.rss)} | ${mib(all.rss)} (×${fmt(all.rss / one.rss, 2)}) | ` +
        `${mib(one.live)} | ${mib(two.live)} | ${mib(all.live)} (×${fmt(all.live / one.live, 2)}) | ` +
        `${mib(two.peak)} | ${mib(all.peak)} | ${mib(r.changesPeakMiB)} | ${mib(r.envoyPeakMiB)} |`,
    );
  }
  return lines.join('\n');
}

export function fleetTables(rows: readonly FleetRow[]): string {
  const stages = rows.flatMap((r) => (r.stages ? [stagesTable(r.routes, r.stages, r.settle)] : []));
  const cpu = rows.flatMap((r) => cpuTable(r) ?? []);
  const requests = requestsTable(rows);
  const tables = [
    changesTable(rows),
    ...(requests ? [requests] : []),
    ...stages,
    ...cpu,
    startTable(rows),
    memoryTable(rows),
  ];
  return `${tables.join('\n\n')}\n`;
}

export interface FleetReport {
  readonly date: string;
  /** The load average over a minute at the start and the end of the run (others' work too). */
  readonly machine: {
    readonly cpus: number;
    readonly envoy: string;
    readonly loadAverage?: readonly number[];
  };
  /** The commit measured (`git describe --always --dirty`), when known. */
  readonly code?: string;
  readonly provider: 'files' | 'kubernetes';
  /** Flags `serve`'s Node ran with (--serve-node-arg), when any. */
  readonly serveNodeArgs?: readonly string[];
  readonly rows: readonly FleetRow[];
}

const base = (provider: string): string =>
  provider === 'files' ? 'scale-fleet-latest' : 'scale-fleet-kubernetes-latest';

export function writeFleetResults(root: string, report: FleetReport): string {
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2)}\n`;
  writeFileSync(join(dir, `${base(report.provider)}.json`), json);
  writeFileSync(join(dir, `${base(report.provider)}.md`), fleetTables(report.rows));
  return `wrote bench/results/${base(report.provider)}.{json,md}`;
}

/** The tables again from the recorded JSON (for when their code changes). */
export function rerenderFleet(root: string, provider: string): string {
  const dir = join(root, 'bench', 'results');
  const report = JSON.parse(readFileSync(join(dir, `${base(provider)}.json`), 'utf8')) as FleetReport;
  writeFileSync(join(dir, `${base(provider)}.md`), fleetTables(report.rows));
  return `wrote bench/results/${base(provider)}.md from ${base(provider)}.json`;
}
