// `bench:scale --fleet`'s tables and result files: bench/results/scale-fleet-latest.{json,md}
// (scale-fleet-kubernetes-latest.* from an API server).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeTimes, FleetRow, SentPerChange } from './scale-fleet-row.js';

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
    '| provider | routes | Envoys | added → on both (median / p95) | edited | deleted | sent per Envoy: added | edited | deleted | (resources) | EndpointSlice change |',
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

/** Start-up, memory with one Envoy and with all of them, and an Envoy joining. */
function memoryTable(rows: readonly FleetRow[]): string {
  const lines = [
    '| provider | routes | /readyz | first Envoy serves all | peak until then | RSS, 1 Envoy | RSS, all Envoys | peak while they connect | peak during changes | new Envoy serves all | sent to it | Envoy peak RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const ratio = r.fleetRestMiB / r.oneEnvoyRestMiB;
    lines.push(
      `| ${r.provider} | ${r.routes.toLocaleString('en')} | ${fmt(r.readySeconds)} s | ${fmt(r.firstServedSeconds)} s | ` +
        `${fmt(r.readyPeakMiB, 0)} MiB | ${fmt(r.oneEnvoyRestMiB, 0)} MiB | ${fmt(r.fleetRestMiB, 0)} MiB (×${fmt(ratio, 2)}) | ` +
        `${fmt(r.fleetConnectPeakMiB, 0)} MiB | ${fmt(r.changesPeakMiB, 0)} MiB | ${fmt(r.newEnvoySeconds)} s | ` +
        `${bytes(r.newEnvoySent)} | ${fmt(r.envoyPeakMiB, 0)} MiB |`,
    );
  }
  return lines.join('\n');
}

export function fleetTables(rows: readonly FleetRow[]): string {
  return `${changesTable(rows)}\n\n${memoryTable(rows)}\n`;
}

export interface FleetReport {
  readonly date: string;
  readonly machine: { readonly cpus: number; readonly envoy: string };
  /** The commit measured (`git describe --always --dirty`), when known. */
  readonly code?: string;
  readonly provider: 'files' | 'kubernetes';
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
