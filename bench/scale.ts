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
//                                                     (scripts/kube-local.mjs), changed with kubectl
//
// The routes are what a repository of many teams holds: route-i serves svc-i.example under
// /r/i with a retry, all to one Service with two endpoints (the benchmark's minimal backend).
// Gateway mode runs `steadfast dev` (Envoy on a free port) and is timed through Envoy; attach
// mode runs `steadfast serve` and is timed through its /v1/resolve (Envoy's own ext_proc path
// does not change with the number of routes).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
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
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { resourceFiles } from '../extproc/src/envoy/file-resources.js';
import { envoyVersion } from '../extproc/src/local/envoy-binary.js';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { compileSnapshot } from '../extproc/src/pipeline/snapshot.js';
import { RouteFileEncoder } from '../extproc/src/xds/route-files.js';
import { startMinimalBackend } from './minimal-backend.js';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { scaleCaption, scaleChart } from './scale-chart.js';
import type { ScaleRow } from './scale-row.js';
import { scaleRouteYaml } from './scale-routes.js';

const { values: opts } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,10000' },
    modes: { type: 'string', default: 'gateway,attach' },
    'no-write': { type: 'boolean', default: false },
    rerender: { type: 'boolean', default: false },
    provider: { type: 'string', default: 'files' },
  },
});

type Provider = NonNullable<ScaleRow['provider']>;

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

function baseYaml(listenerPort: number, backendPort: number, provider: Provider = 'files'): string {
  // An API server refuses loopback addresses in IPv4 slices: there the endpoint is an FQDN
  // under .localhost, which Envoy resolves to 127.0.0.1 (the backend listens there too).
  const slice =
    provider === 'files'
      ? `addressType: IPv4
ports: [{ name: http, port: ${backendPort} }]
endpoints:
${ENDPOINTS.map((a) => `  - addresses: ['${a}']`).join('\n')}`
      : `addressType: FQDN
ports: [{ name: http, port: ${backendPort} }]
endpoints:
  - addresses: [scale.localhost]`;
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
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
${slice}
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
    return scaleRouteYaml(i, i === edited ? `/edited/${i}` : undefined);
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
/** A process's memory as /proc tells it, in MiB: VmHWM (the peak) or VmRSS (now). */
function memoryMiB(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * How long the service is left alone before its memory at rest is read. V8's memory reducer
 * starts 8 s after the last burst of allocation and returns the old generation's garbage
 * over the following seconds (measured at 10,000 routes: 425 MiB after three quick changes,
 * 222 MiB 20 s later).
 */
const REST_SECONDS = 30;

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
  const resources = resourceFiles(snapshot.ir, options, '/tmp/steadfast-scale', '1');
  // As written for the local Envoy: route files in protobuf, the rest as JSON.
  const encoder = new RouteFileEncoder();
  let bytes = resources.listeners.length;
  for (const rc of resources.routes.values()) bytes += encoder.encode(rc, '1').length;
  bytes += JSON.stringify([...resources.clusters.values()]).length;
  return Math.round(bytes / n);
}

/** How the objects change: files saved in the directory, or kubectl against the API server. */
interface Changes {
  add(i: number): void;
  edit(i: number): void;
  remove(i: number): void;
}

function fileChanges(dir: string, n: number): Changes {
  return {
    // One route more, in a file of its own.
    add: (i) => save(dir, 'added.yaml', scaleRouteYaml(i)),
    // One route edited in its file (the whole file is written again, as a deploy does).
    edit: (i) =>
      save(dir, routesFile(i), routesYaml(Math.floor(i / ROUTES_PER_FILE) * ROUTES_PER_FILE, n, i)),
    // The added route's file removed.
    remove: () => rmSync(join(dir, 'added.yaml')),
  };
}

/**
 * scripts/kube-local.mjs, loaded from the checkout: the benchmark runs from dist/, which holds
 * no copy of it.
 */
async function kubeLocal(): Promise<typeof import('../scripts/kube-local.mjs')> {
  return (await import(
    pathToFileURL(join(ROOT, 'scripts', 'kube-local.mjs')).href
  )) as typeof import('../scripts/kube-local.mjs');
}

const KUBECTL = join(ROOT, '.tools', 'bin', 'kubectl');

function kubectl(kube: LocalKube, args: readonly string[], input?: string): void {
  execFileSync(KUBECTL, ['--kubeconfig', kube.adminConfig, ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
    maxBuffer: 1 << 26,
    ...(input !== undefined ? { input } : {}),
  });
}

function kubeChanges(kube: LocalKube): Changes {
  return {
    add: (i) => kubectl(kube, ['create', '-f', '-'], scaleRouteYaml(i)),
    edit: (i) =>
      kubectl(kube, [
        'patch',
        'httproute',
        `route-${i}`,
        '--type=json',
        '-p',
        JSON.stringify([
          { op: 'replace', path: '/spec/rules/0/matches/0/path/value', value: `/edited/${i}` },
        ]),
      ]),
    remove: (i) => kubectl(kube, ['delete', 'httproute', `route-${i}`]),
  };
}

/** Whether route-i's status has steadfast's entry, read with kubectl. */
function statusWritten(kube: LocalKube, i: number): boolean {
  const out = execFileSync(
    KUBECTL,
    [
      '--kubeconfig',
      kube.adminConfig,
      'get',
      'httproute',
      `route-${i}`,
      '-o',
      'jsonpath={.status.parents[*].controllerName}',
    ],
    { encoding: 'utf8' },
  );
  return out.includes('steadfast.dev/gateway-controller');
}

async function measure(mode: Mode, n: number, backendPort: number, provider: Provider): Promise<ScaleRow> {
  const dir = mkdtempSync(join(tmpdir(), `steadfast-scale-${mode}-${n}-`));
  const listenerPort = await freePort();
  const adminPort = await freePort();
  save(dir, 'base.yaml', baseYaml(listenerPort, backendPort, provider));
  for (let first = 0; first < n; first += ROUTES_PER_FILE) save(dir, routesFile(first), routesYaml(first, n));
  // A fresh API server per measurement, the objects created before steadfast starts.
  const kube =
    provider === 'kubernetes' ? await (await kubeLocal()).startLocalKube({ log: () => {} }) : undefined;
  if (kube)
    for (const f of readdirSync(dir)
      .filter((x) => x.endsWith('.yaml'))
      .sort())
      kubectl(kube, ['create', '-f', join(dir, f)]);
  const changes = kube ? kubeChanges(kube) : fileChanges(dir, n);
  const source = kube ? ['--kubeconfig', kube.steadfastConfig] : ['--config', dir];
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
  const alive = (): boolean => cli.child.exitCode === null && cli.child.signalCode === null;
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
    changes.add(n);
    const addSeconds = await until(
      `${mode} ${n}: the added route`,
      limitMs,
      () => served(n, `/r/${n}`),
      alive,
    );
    changes.edit(last);
    const editSeconds = await until(
      `${mode} ${n}: the edited route`,
      limitMs,
      () => served(last, `/edited/${last}`),
      alive,
    );
    changes.remove(n);
    const deleteSeconds = await until(
      `${mode} ${n}: the deleted route`,
      limitMs,
      () => served(n, `/r/${n}`, 404),
      alive,
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
    await kube?.stop();
    if (kube) rmSync(kube.dir, { recursive: true, force: true });
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

async function main(): Promise<void> {
  const provider = opts.provider as Provider;
  if (provider !== 'files' && provider !== 'kubernetes') throw new Error('--provider: files, kubernetes');
  if (opts.rerender) return rerender(provider);
  const sizes = (opts.sizes ?? '').split(',').map((s) => Number.parseInt(s, 10));
  if (sizes.some((s) => !Number.isInteger(s) || s < 1))
    throw new Error(`--sizes: whole numbers, got ${opts.sizes}`);
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
