// `npm run bench:scale`: the control plane at 100 to 10,000 routes (50,000 on request), in both
// modes, the way a platform team meets it: how long until the last route answers, how much
// memory the control service and Envoy hold, how long one changed route takes to be served,
// and how many bytes of Envoy configuration each route costs. Numbers, never assertions.
//
//   npm run bench:scale                               100, 1000, 10000 routes, both modes
//   npm run bench:scale -- --sizes 100,1000,10000,50000
//   npm run bench:scale -- --modes gateway --sizes 1000 --no-write
//   npm run bench:scale -- --rerender                 the table and chart again from scale-latest.json
//
// The routes are what a repository of many teams holds: route-i serves svc-i.example under
// /r/i with a retry, all to one Service with two endpoints (the benchmark's minimal backend).
// Gateway mode runs `steadfast dev` (Envoy on a free port) and is timed through Envoy; attach
// mode runs `steadfast serve` and is timed through its /v1/resolve (Envoy's own ext_proc path
// does not change with the number of routes).
import { type ChildProcess, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resourceFiles } from '../extproc/src/envoy/file-resources.js';
import { envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { compileSnapshot } from '../extproc/src/pipeline/snapshot.js';
import { startMinimalBackend } from './minimal-backend.js';
import { scaleCaption, scaleChart } from './scale-chart.js';
import type { ScaleRow } from './scale-row.js';

const { values: opts } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,10000' },
    modes: { type: 'string', default: 'gateway,attach' },
    'no-write': { type: 'boolean', default: false },
    rerender: { type: 'boolean', default: false },
  },
});

type Mode = ScaleRow['mode'];

const ROOT = projectRoot();
const BIN = join(ROOT, 'bin', 'steadfast.js');
const ENDPOINTS = ['127.0.0.2', '127.0.0.3'];
/** Only for sizing the generated configuration; the commands make their own keys. */
const SCALE_SESSION_KEY = Buffer.alloc(32, 7).toString('base64');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function baseYaml(listenerPort: number, backendPort: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: ${listenerPort} }
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: ${backendPort} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: default, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ name: http, port: ${backendPort} }]
endpoints:
${ENDPOINTS.map((a) => `  - addresses: ['${a}']`).join('\n')}
`;
}

function routeYaml(i: number, path = `/r/${i}`): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: route-${i}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['svc-${i}.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
      retry: { attempts: ${(i % 5) + 1}, codes: [503] }
`;
}

/**
 * Routes per file: a repository of many teams keeps them in many files, and one file stays
 * under the control service's 16 MiB limit for a single file (10,000 of these are 3.4 MB).
 */
const ROUTES_PER_FILE = 10_000;

/** The file that holds route i. */
const routesFile = (i: number): string => `routes-${Math.floor(i / ROUTES_PER_FILE)}.yaml`;

/** The routes of file `routesFile(first)`: routes first … min(first + ROUTES_PER_FILE, n) - 1. */
function routesYaml(first: number, n: number, edited?: number): string {
  const last = Math.min(first + ROUTES_PER_FILE, n);
  return Array.from({ length: last - first }, (_, k) => {
    const i = first + k;
    return routeYaml(i, i === edited ? `/edited/${i}` : undefined);
  }).join('---\n');
}

/** Writes under a temporary name, then renames: an editor's or a deploy tool's atomic save. */
function save(dir: string, name: string, text: string): void {
  writeFileSync(join(dir, `.${name}.tmp`), text);
  renameSync(join(dir, `.${name}.tmp`), join(dir, name));
}

/** GET through Envoy with a Host header: the status, or 0 when nothing answers yet. */
function status(port: number, host: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host }, agent: false, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

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

async function until(
  what: string,
  limitMs: number,
  check: () => Promise<boolean>,
  alive: () => boolean = () => true,
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await check()) return (performance.now() - t0) / 1000;
    if (!alive()) throw new Error(`${what}: the command exited`);
    if (performance.now() - t0 > limitMs) throw new Error(`${what}: not within ${limitMs / 1000} s`);
    await sleep(20);
  }
}

/** Peak resident memory (VmHWM) of a process, in MiB. */
function peakMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The descendants of a process, by walking /proc/<pid>/task/<tid>/children. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number): void => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(' ').filter((x) => x !== '')) {
        out.push(Number(c));
        visit(Number(c));
      }
    }
  };
  visit(pid);
  return out;
}

function envoyPid(control: number): number | undefined {
  return descendants(control).find((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'envoy';
    } catch {
      return false;
    }
  });
}

function startCli(args: readonly string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

async function stopCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

function envoyBytesPerRoute(dir: string, n: number): number {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ path: f, text: readFileSync(join(dir, f), 'utf8') }));
  const snapshot = compileSnapshot(files);
  const options = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [SCALE_SESSION_KEY] };
  const resources = resourceFiles(snapshot.table, options, '/tmp/steadfast-scale', '1');
  let bytes = resources.listeners.length;
  for (const text of resources.routes.values()) bytes += text.length;
  bytes += JSON.stringify([...resources.clusters.values()]).length;
  return Math.round(bytes / n);
}

async function measure(mode: Mode, n: number, backendPort: number): Promise<ScaleRow> {
  const dir = mkdtempSync(join(tmpdir(), `steadfast-scale-${mode}-${n}-`));
  const listenerPort = await freePort();
  const adminPort = await freePort();
  save(dir, 'base.yaml', baseYaml(listenerPort, backendPort));
  for (let first = 0; first < n; first += ROUTES_PER_FILE) save(dir, routesFile(first), routesYaml(first, n));
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
      ? ['dev', '--config', dir, '--admin-port', String(adminPort), '--envoy-admin-port', '0']
      : ['serve', '--config', dir, '--admin-port', String(adminPort), '--ext-proc-address', '127.0.0.1:0'];
  const t0 = performance.now();
  const cli = startCli(args);
  const alive = (): boolean => cli.child.exitCode === null && cli.child.signalCode === null;
  try {
    await until(`${mode} ${n}: the last route`, limitMs, () => served(last, `/r/${last}`), alive);
    const readySeconds = (performance.now() - t0) / 1000;
    // One route more, in a file of its own.
    save(dir, 'added.yaml', routeYaml(n));
    const addSeconds = await until(
      `${mode} ${n}: the added route`,
      limitMs,
      () => served(n, `/r/${n}`),
      alive,
    );
    // One route edited in its file (the whole file is written again, as a deploy does).
    const editedFirst = Math.floor(last / ROUTES_PER_FILE) * ROUTES_PER_FILE;
    save(dir, routesFile(last), routesYaml(editedFirst, n, last));
    const editSeconds = await until(
      `${mode} ${n}: the edited route`,
      limitMs,
      () => served(last, `/edited/${last}`),
      alive,
    );
    // The added route's file removed.
    rmSync(join(dir, 'added.yaml'));
    const deleteSeconds = await until(
      `${mode} ${n}: the deleted route`,
      limitMs,
      () => served(n, `/r/${n}`, 404),
      alive,
    );
    const control = cli.child.pid;
    const envoy = mode === 'gateway' && control !== undefined ? envoyPid(control) : undefined;
    return {
      mode,
      routes: n,
      readySeconds,
      controlPeakMiB: peakMiB(control),
      ...(mode === 'gateway' ? { envoyPeakMiB: peakMiB(envoy) } : {}),
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
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x: number | undefined, digits = 1): string =>
  x === undefined ? '–' : Number.isNaN(x) ? '?' : x.toFixed(digits);

export function scaleTable(rows: readonly ScaleRow[]): string {
  const lines = [
    '| mode | routes | last route served | control service peak RSS | Envoy peak RSS | one route added → served | one route edited → served | one route deleted → gone | Envoy config per route |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.mode} | ${r.routes.toLocaleString('en')} | ${fmt(r.readySeconds)} s | ${fmt(r.controlPeakMiB, 0)} MiB | ` +
        `${r.envoyPeakMiB === undefined ? '–' : `${fmt(r.envoyPeakMiB, 0)} MiB`} | ${fmt(r.addSeconds, 2)} s | ` +
        `${fmt(r.editSeconds, 2)} s | ${fmt(r.deleteSeconds, 2)} s | ${r.envoyBytesPerRoute.toLocaleString('en')} B |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The table and chart again from the recorded scale-latest.json (for when their code changes). */
function rerender(): void {
  const dir = join(ROOT, 'bench', 'results');
  const report = JSON.parse(readFileSync(join(dir, 'scale-latest.json'), 'utf8')) as {
    date: string;
    machine: { cpus: number; envoy: string };
    rows: ScaleRow[];
  };
  const rows = report.rows.map((r) => ({ ...r, controlPeakMiB: r.controlPeakMiB ?? Number.NaN }));
  writeFileSync(join(dir, 'scale-latest.md'), scaleTable(rows));
  writeFileSync(join(dir, 'scale-latest.svg'), scaleChart(rows, scaleCaption(report)));
  process.stdout.write('wrote bench/results/scale-latest.{md,svg} from scale-latest.json\n');
}

async function main(): Promise<void> {
  if (opts.rerender) return rerender();
  const sizes = (opts.sizes ?? '').split(',').map((s) => Number.parseInt(s, 10));
  if (sizes.some((s) => !Number.isInteger(s) || s < 1))
    throw new Error(`--sizes: whole numbers, got ${opts.sizes}`);
  const modes = (opts.modes ?? '').split(',') as Mode[];
  if (modes.some((m) => m !== 'gateway' && m !== 'attach')) throw new Error(`--modes: gateway, attach`);
  const backend = await startMinimalBackend(ENDPOINTS);
  const rows: ScaleRow[] = [];
  try {
    for (const n of sizes) {
      for (const mode of modes) {
        process.stdout.write(`bench:scale: ${mode} mode, ${n} routes … `);
        const row = await measure(mode, n, backend.port);
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
    rows,
  };
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2)}\n`;
  writeFileSync(join(dir, 'scale-latest.json'), json);
  writeFileSync(join(dir, 'scale-latest.md'), table);
  writeFileSync(join(dir, 'scale-latest.svg'), scaleChart(rows, scaleCaption(report)));
  process.stdout.write('wrote bench/results/scale-latest.{json,md,svg}\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:scale: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
