// `npm run bench:scale`: the control plane at 100 to 10,000 routes (50,000 on request), in both
// modes, the way a platform team meets it: how long until the last route answers, how much
// memory the control service and Envoy hold, how long one changed route takes to be served,
// and how many bytes of Envoy configuration each route costs. Numbers, never assertions.
//
//   npm run bench:scale                               100, 1000, 10000 routes, both modes
//   npm run bench:scale -- --sizes 100,1000,10000,50000
//   npm run bench:scale -- --modes gateway --sizes 1000 --no-write
//   npm run bench:scale -- --rerender                 the table and chart again from scale-latest.json
//   npm run bench:scale -- --provider kubernetes      the same objects from a real API server
//                                                     (scripts/kube-local.mjs), changed by requests
//                                                     the benchmark sends (scale-changes.ts);
//                                                     --kube-api-qps N (default 2000) paces its writes
//   npm run bench:scale -- --fleet                    `serve --xds` feeding 2 real Envoys and 18
//                                                     lightweight ADS clients over delta ADS, at
//                                                     1000 and 10000 routes (scale-fleet.ts)
//   npm run bench:scale -- --fleet --sizes 1000 --changes 20 --light-clients 18 --provider kubernetes
//   npm run bench:scale -- --fleet --serve-node-arg=--max-semi-space-size=4   serve's Node as the
//                                                     chart runs a gateway-mode control plane
//
// The routes are what a repository of many teams holds: route-i serves svc-i.example under
// /r/i with a retry, all to one Service with two endpoints (the benchmark's minimal backend).
// Gateway mode runs `steadfast dev` (Envoy on a free port) and is timed through Envoy; attach
// mode runs `steadfast serve` and is timed through its /v1/resolve (Envoy's own ext_proc path
// does not change with the number of routes).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resourceFiles } from '../extproc/src/envoy/file-resources.js';
import { envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../extproc/src/pipeline/snapshot.js';
import { RouteFileEncoder } from '../extproc/src/xds/route-files.js';
import { startMinimalBackend } from './minimal-backend.js';
import {
  type Change,
  fileChanges,
  kubeChanges,
  kubeSource,
  startKubeWith,
  statusWritten,
  stopKube,
} from './scale-changes.js';
import { scaleCaption, scaleChart } from './scale-chart.js';
import { ENDPOINTS, type Provider, writeScaleConfig } from './scale-config.js';
import { runFleet } from './scale-fleet.js';
import { fleetTables, rerenderFleet, writeFleetResults } from './scale-fleet-report.js';
import type { FleetRow } from './scale-fleet-row.js';
import {
  REST_SECONDS,
  ROOT,
  envoyPid,
  freePort,
  memoryMiB,
  sleep,
  startCli,
  status,
  stopCli,
  timedChange,
  until,
} from './scale-process.js';
import type { ScaleRow } from './scale-row.js';

const { values: opts } = parseArgs({
  options: {
    /** Default: 100,1000,10000; with --fleet, 1000,10000. */
    sizes: { type: 'string' },
    modes: { type: 'string', default: 'gateway,attach' },
    'no-write': { type: 'boolean', default: false },
    rerender: { type: 'boolean', default: false },
    provider: { type: 'string', default: 'files' },
    fleet: { type: 'boolean', default: false },
    /** --fleet: how many times each of add, edit and delete is timed. */
    changes: { type: 'string', default: '20' },
    /** --fleet: lightweight ADS clients beside the 2 real Envoys. */
    'light-clients': { type: 'string', default: '18' },
    /** --fleet: a flag for `serve`'s Node, as a deployment gives it (the chart: --max-semi-space-size=4). */
    'serve-node-arg': { type: 'string', multiple: true, default: [] },
    /** --fleet: profile steadfast's service thread over the timed changes, to PREFIX-<routes>.cpuprofile, and sum it per change. */
    'profile-changes': { type: 'string' },
    /** --provider kubernetes: steadfast's --kube-api-qps and --kube-api-burst. */
    'kube-api-qps': { type: 'string', default: '2000' },
    'kube-api-burst': { type: 'string', default: '2000' },
  },
});

type Mode = ScaleRow['mode'];

/** Only for sizing the generated configuration; the commands make their own keys. */
const SCALE_SESSION_KEY = Buffer.alloc(32, 7).toString('base64');

/** Whether attach mode's resolver matches this request to route-i. */
async function resolvesTo(adminPort: number, i: number, path: string): Promise<boolean> {
  const q = new URLSearchParams({ host: `svc-${i}.example`, path });
  try {
    const r = await fetch(`http://127.0.0.1:${adminPort}/v1/resolve?${q}`);
    const body = (await r.json()) as { matched?: boolean; token?: string };
    return body.matched === true && (body.token ?? '').includes(`route-${i}/`);
  } catch {
    return false;
  }
}

function envoyBytesPerRoute(dir: string, n: number): number {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ path: f, text: readFileSync(join(dir, f), 'utf8') }));
  const snapshot = compileSnapshot(files);
  const options = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [SCALE_SESSION_KEY] };
  const resources = resourceFiles(snapshot.ir, options, '/tmp/steadfast-scale', '1');
  // As written for the local Envoy: route files in protobuf, the rest as JSON.
  const encoder = new RouteFileEncoder();
  let bytes = resources.listeners.length;
  for (const rc of resources.routes.values()) bytes += encoder.encode(rc, '1').length;
  bytes += JSON.stringify([...resources.clusters.values()]).length;
  return Math.round(bytes / n);
}

async function measure(mode: Mode, n: number, backendPort: number, provider: Provider): Promise<ScaleRow> {
  const dir = mkdtempSync(join(tmpdir(), `steadfast-scale-${mode}-${n}-`));
  const listenerPort = await freePort();
  const adminPort = await freePort();
  writeScaleConfig(dir, n, { listener: listenerPort, backend: backendPort }, provider);
  // A fresh API server per measurement, the objects created before steadfast starts.
  const kube = provider === 'kubernetes' ? await startKubeWith(dir) : undefined;
  const changes = kube ? kubeChanges(kube) : fileChanges(dir, n);
  const source = kube ? kubeSource(kube, opts['kube-api-qps'], opts['kube-api-burst']) : ['--config', dir];
  const last = n - 1;
  // Generous: 50,000 routes take minutes on a small machine.
  const limitMs = Math.max(120_000, n * 20);
  const served =
    mode === 'gateway'
      ? async (i: number, path: string, want = 200): Promise<boolean> =>
          (await status(listenerPort, `svc-${i}.example`, path)) === want
      : async (i: number, path: string, want = 200): Promise<boolean> =>
          (await resolvesTo(adminPort, i, path)) === (want === 200);
  const args =
    mode === 'gateway'
      ? ['dev', ...source, '--admin-port', String(adminPort), '--envoy-admin-port', '0']
      : ['serve', ...source, '--admin-port', String(adminPort), '--ext-proc-address', '127.0.0.1:0'];
  const t0 = performance.now();
  const cli = startCli(args);
  const alive = cli.alive;
  try {
    await until(`${mode} ${n}: the last route`, limitMs, () => served(last, `/r/${last}`), alive);
    const readySeconds = (performance.now() - t0) / 1000;
    // The status of every route is written once, after the first generation: the changes are
    // timed after it, as a team's edit usually comes long after the control plane started.
    const statusSeconds = kube
      ? await until(
          `${mode} ${n}: the last route's status`,
          limitMs,
          async () => statusWritten(kube, last),
          alive,
        )
      : undefined;
    // Each from the moment the file is saved or the request sent (timedChange).
    const timed = async (make: Change, wait: () => Promise<unknown>): Promise<number> => {
      await changes.ready();
      return (await timedChange(make, wait)).seconds;
    };
    const addSeconds = await timed(changes.add(n), () =>
      until(`${mode} ${n}: the added route`, limitMs, () => served(n, `/r/${n}`), alive),
    );
    const editSeconds = await timed(changes.edit(last, `/edited/${last}`), () =>
      until(`${mode} ${n}: the edited route`, limitMs, () => served(last, `/edited/${last}`), alive),
    );
    const deleteSeconds = await timed(changes.remove(n), () =>
      until(`${mode} ${n}: the deleted route`, limitMs, () => served(n, `/r/${n}`, 404), alive),
    );
    const control = cli.child.pid;
    const envoy = mode === 'gateway' && control !== undefined ? envoyPid(control) : undefined;
    await sleep(REST_SECONDS * 1000);
    const controlRestMiB = memoryMiB(control, 'VmRSS');
    return {
      mode,
      provider,
      ...(statusSeconds !== undefined ? { statusSeconds } : {}),
      routes: n,
      readySeconds,
      controlPeakMiB: memoryMiB(control, 'VmHWM'),
      ...(mode === 'gateway' ? { envoyPeakMiB: memoryMiB(envoy, 'VmHWM') } : {}),
      controlRestMiB,
      addSeconds,
      editSeconds,
      deleteSeconds,
      envoyBytesPerRoute: envoyBytesPerRoute(dir, n),
    };
  } catch (e) {
    process.stderr.write(`${cli.output().slice(-2000)}\n`);
    throw e;
  } finally {
    await stopCli(cli.child);
    changes.close();
    await stopKube(kube);
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x: number | undefined, digits = 1): string =>
  x === undefined ? '–' : Number.isNaN(x) ? '?' : x.toFixed(digits);

export function scaleTable(rows: readonly ScaleRow[]): string {
  // The provider and the status column only where some row came from an API server.
  const kube = rows.some((r) => r.provider === 'kubernetes');
  const lines = [
    `| mode |${kube ? ' provider |' : ''} routes | last route served |${kube ? ' status of all routes written |' : ''} control service peak RSS | control service at rest | Envoy peak RSS | one route added → served | one route edited → served | one route deleted → gone | Envoy config per route |`,
    `|---|${kube ? '---|' : ''}---:|---:|${kube ? '---:|' : ''}---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.mode} |${kube ? ` ${r.provider ?? 'files'} |` : ''} ${r.routes.toLocaleString('en')} | ${fmt(r.readySeconds)} s |` +
        `${kube ? ` ${r.statusSeconds === undefined ? '–' : `+${fmt(r.statusSeconds)} s`} |` : ''} ${fmt(r.controlPeakMiB, 0)} MiB | ` +
        `${r.controlRestMiB === undefined ? '–' : `${fmt(r.controlRestMiB, 0)} MiB`} | ` +
        `${r.envoyPeakMiB === undefined ? '–' : `${fmt(r.envoyPeakMiB, 0)} MiB`} | ${fmt(r.addSeconds, 2)} s | ` +
        `${fmt(r.editSeconds, 2)} s | ${fmt(r.deleteSeconds, 2)} s | ${r.envoyBytesPerRoute.toLocaleString('en')} B |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The results' file names: scale-latest for files, scale-kubernetes-latest for an API server. */
const resultsBase = (provider: Provider): string =>
  provider === 'files' ? 'scale-latest' : 'scale-kubernetes-latest';

/** The table and chart again from the recorded JSON (for when their code changes). */
function rerender(provider: Provider): void {
  const dir = join(ROOT, 'bench', 'results');
  const base = resultsBase(provider);
  const report = JSON.parse(readFileSync(join(dir, `${base}.json`), 'utf8')) as {
    date: string;
    machine: { cpus: number; envoy: string };
    provider?: string;
    rows: ScaleRow[];
  };
  const rows = report.rows.map((r) => ({ ...r, controlPeakMiB: r.controlPeakMiB ?? Number.NaN }));
  writeFileSync(join(dir, `${base}.md`), scaleTable(rows));
  writeFileSync(join(dir, `${base}.svg`), scaleChart(rows, scaleCaption(report)));
  process.stdout.write(`wrote bench/results/${base}.{md,svg} from ${base}.json\n`);
}

/** A whole number ≥ `min` from a flag. */
function count(flag: string, text: string, min: number): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min) throw new Error(`--${flag}: a whole number ≥ ${min}, got ${text}`);
  return v;
}

/**
 * The commit measured, `-dirty` when tracked files differ from it; bench/results/ does not count
 * (a run of one provider writes there before a run of the other).
 */
function codeVersion(): string {
  const git = (args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const changed = git([
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--',
    '.',
    ':(exclude)bench/results',
  ]);
  return `${git(['rev-parse', '--short', 'HEAD'])}${changed === '' ? '' : '-dirty'}`;
}

/** `--fleet`: the sizes from one provider, written to scale-fleet-latest.* unless --no-write. */
async function fleetMain(provider: Provider, sizes: readonly number[]): Promise<void> {
  const options = {
    changes: count('changes', opts.changes ?? '', 1),
    lightClients: count('light-clients', opts['light-clients'] ?? '', 0),
    serveNodeArgs: opts['serve-node-arg'] ?? [],
    ...(opts['profile-changes'] !== undefined ? { profileChanges: opts['profile-changes'] } : {}),
  };
  // The machine is shared: its load (1-minute average) at the start and the end says how much.
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  const backend = await startMinimalBackend([...ENDPOINTS, '127.0.0.1']);
  let rows: FleetRow[];
  try {
    rows = await runFleet(sizes, backend.port, provider, options);
  } finally {
    await backend.close();
  }
  process.stdout.write(`\n${fleetTables(rows)}`);
  if (opts['no-write']) return;
  const code = codeVersion();
  const loadAverage = [loadAtStart, loadavg()[0] ?? Number.NaN];
  const machine = { cpus: availableParallelism(), envoy: envoyVersion(), loadAverage };
  process.stdout.write(
    `${writeFleetResults(ROOT, {
      date: new Date().toISOString(),
      machine,
      code,
      provider,
      ...(options.serveNodeArgs.length > 0 ? { serveNodeArgs: options.serveNodeArgs } : {}),
      rows,
    })}\n`,
  );
}

async function main(): Promise<void> {
  const provider = opts.provider as Provider;
  if (provider !== 'files' && provider !== 'kubernetes') throw new Error('--provider: files, kubernetes');
  if (opts.rerender) {
    if (opts.fleet) process.stdout.write(`${rerenderFleet(ROOT, provider)}\n`);
    else rerender(provider);
    return;
  }
  const sizesText = opts.sizes ?? (opts.fleet ? '1000,10000' : '100,1000,10000');
  const sizes = sizesText.split(',').map((s) => count('sizes', s, 1));
  if (opts.fleet) return fleetMain(provider, sizes);
  const modes = (opts.modes ?? '').split(',') as Mode[];
  if (modes.some((m) => m !== 'gateway' && m !== 'attach')) throw new Error(`--modes: gateway, attach`);
  // 127.0.0.1 too: the API server's slices name the backend scale.localhost.
  const backend = await startMinimalBackend([...ENDPOINTS, '127.0.0.1']);
  const rows: ScaleRow[] = [];
  try {
    for (const n of sizes) {
      for (const mode of modes) {
        process.stdout.write(`bench:scale: ${mode} mode, ${provider}, ${n} routes … `);
        const row = await measure(mode, n, backend.port, provider);
        rows.push(row);
        process.stdout.write(
          `served after ${fmt(row.readySeconds)} s; one route added ${fmt(row.addSeconds, 2)} s, ` +
            `edited ${fmt(row.editSeconds, 2)} s, deleted ${fmt(row.deleteSeconds, 2)} s\n`,
        );
      }
    }
  } finally {
    await backend.close();
  }
  const table = scaleTable(rows);
  process.stdout.write(`\n${table}`);
  if (opts['no-write']) return;
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), envoy: envoyVersion() },
    provider,
    rows,
  };
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2)}\n`;
  const base = resultsBase(provider);
  writeFileSync(join(dir, `${base}.json`), json);
  writeFileSync(join(dir, `${base}.md`), table);
  writeFileSync(join(dir, `${base}.svg`), scaleChart(rows, scaleCaption(report)));
  process.stdout.write(`wrote bench/results/${base}.{json,md,svg}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:scale: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
