// The API server's CPU per HTTPRoute status write, by the form a controller may send to the
// status subresource, on a fresh local API server (scripts/kube-local.mjs) holding N routes:
//   - update: PUT of the object as the watch delivered it (spec and all) with its new status;
//   - update of status only: PUT of apiVersion, kind, name, namespace, resourceVersion and status
//     (the server keeps everything but status from what it holds);
//   - merge patch and JSON patch of status, each with metadata.resourceVersion, so a concurrent
//     writer gets 409 as with PUT;
//   - server-side apply (force).
// Each method writes every route's status once per round (8 at a time, a changed message each
// time), the methods in turn, while `--watchers` watches of HTTPRoutes read every event (1: the
// controller's own informer). Figures are kube-apiserver's and etcd's CPU time (/proc) over each
// run less an idle run of the same length, divided by N. `--profile METHOD` then takes a CPU
// profile of the API server (`go tool pprof -top FILE`) while METHOD writes for 20 s.
//
// `--steadfast` instead runs `steadfast serve --kubeconfig` (no rate limit) against the N routes
// with their Gateway and GatewayClass, and reports steadfast's, the API server's and etcd's CPU
// per status write while it writes them (what /readyz counts).
//
//   node dist/bench/status-write-cost.js [--routes 1000] [--rounds 3] [--watchers 1] [--methods update,merge patch] [--profile update]
//   node dist/bench/status-write-cost.js --steadfast [--routes 1000] [--cpu-prof-dir DIR]
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { ROOT, freePort, sleep, startCli, stopCli } from './scale-process.js';

type Obj = { metadata: { name: string; resourceVersion: string; generation: number } } & Record<
  string,
  unknown
>;
type Write = (o: Obj, round: number) => Promise<Obj>;
type Call = ReturnType<typeof client>;

const BASE = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';
const CONCURRENCY = 8;
const PROFILE_SECONDS = 20;
const OURS = 'steadfast.dev/gateway-controller';

/** A process's user + system CPU time in ms (clock ticks of 10 ms). */
function cpuMs(pid: string): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function pidWith(needle: string): string {
  const pid = readdirSync('/proc').find((p) => {
    try {
      return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
  if (!pid) throw new Error(`no process with ${needle}`);
  return pid;
}

/** The API server's and etcd's pids. */
function serverPids(kube: LocalKube): string[] {
  return [
    pidWith(`--secure-port=${new URL(kube.server).port}`),
    pidWith(`--listen-client-urls=${kube.etcd}`),
  ];
}

function client(kube: LocalKube) {
  const ca = readFileSync(kube.ca);
  const port = new URL(kube.server).port;
  return (method: string, path: string, body?: unknown, type = 'application/json') =>
    new Promise<Obj & { items?: Obj[] }>((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers = { authorization: `Bearer ${kube.adminToken}`, 'content-type': type };
      const req = request({ host: '127.0.0.1', port, method, path, ca, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if ((res.statusCode ?? 500) >= 300)
            reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve((text.startsWith('{') ? JSON.parse(text) : { raw: text }) as Obj);
        });
      });
      req.on('error', reject);
      req.end(data);
    });
}

/** `count` watches of every HTTPRoute that read (and drop) each event, as informers do. */
function watchers(kube: LocalKube, resourceVersion: string, count: number): () => void {
  const ca = readFileSync(kube.ca);
  const port = new URL(kube.server).port;
  const path = `${BASE}?watch=1&resourceVersion=${resourceVersion}&allowWatchBookmarks=true`;
  const headers = { authorization: `Bearer ${kube.adminToken}` };
  const reqs = Array.from({ length: count }, () => {
    const req = request({ host: '127.0.0.1', port, path, ca, headers }, (res: IncomingMessage) =>
      res.resume(),
    );
    req.on('error', () => {});
    req.end();
    return req;
  });
  return () => reqs.forEach((r) => r.destroy());
}

function status(round: number, generation: number): Record<string, unknown> {
  const condition = (type: string, message: string, at: string) => ({
    ...{ type, status: 'True', reason: type, message, observedGeneration: generation },
    lastTransitionTime: at,
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    parents: [
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
        controllerName: OURS,
        conditions: [
          condition('Accepted', `accepted (round ${round})`, now),
          condition('ResolvedRefs', 'resolved', '2026-01-01T00:00:00Z'),
        ],
      },
    ],
  };
}

function methods(call: Call): Record<string, Write> {
  const path = (o: Obj) => `${BASE}/${o.metadata.name}/status`;
  const rv = (o: Obj) => o.metadata.resourceVersion;
  const id = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' };
  return {
    update: (o, round) => {
      // As the status writer sends it: the object from its cache, without managedFields.
      const { managedFields: _mf, ...metadata } = o.metadata as Obj['metadata'] & { managedFields?: unknown };
      return call('PUT', path(o), { ...o, metadata, status: status(round, o.metadata.generation) });
    },
    'update of status only': (o, round) =>
      call('PUT', path(o), {
        ...id,
        metadata: { name: o.metadata.name, namespace: 'default', resourceVersion: rv(o) },
        status: status(round, o.metadata.generation),
      }),
    'merge patch': (o, round) =>
      call(
        'PATCH',
        path(o),
        { metadata: { resourceVersion: rv(o) }, status: status(round, o.metadata.generation) },
        'application/merge-patch+json',
      ),
    'JSON patch': (o, round) =>
      call(
        'PATCH',
        path(o),
        [
          { op: 'replace', path: '/metadata/resourceVersion', value: rv(o) },
          { op: 'add', path: '/status', value: status(round, o.metadata.generation) },
        ],
        'application/json-patch+json',
      ),
    'server-side apply': (o, round) =>
      call(
        'PATCH',
        `${path(o)}?fieldManager=steadfast&force=true`,
        {
          ...id,
          metadata: { name: o.metadata.name, namespace: 'default' },
          status: status(round, o.metadata.generation),
        },
        'application/apply-patch+yaml',
      ),
  };
}

/** Writes every route's status once with `write`, 8 at a time; `live` keeps what the server answered. */
async function writeAll(live: Map<string, Obj>, write: Write, round: number): Promise<void> {
  const queue = [...live.values()];
  const worker = async () => {
    for (let o = queue.shift(); o; o = queue.shift()) live.set(o.metadata.name, await write(o, round));
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function measureMethods(
  kube: LocalKube,
  n: number,
  rounds: number,
  watching: number,
  only: readonly string[] | undefined,
): Promise<Map<string, Obj>> {
  const call = client(kube);
  const list = await call('GET', BASE);
  const live = new Map((list.items ?? []).map((o) => [o.metadata.name, o]));
  const stopWatching = watchers(
    kube,
    String((list.metadata as { resourceVersion?: string }).resourceVersion),
    watching,
  );
  const pids = serverPids(kube);
  const sample = () => pids.map(cpuMs);
  const results = new Map<string, number[]>();
  let round = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [name, write] of Object.entries(methods(call))) {
        if (only && !only.includes(name)) continue;
        await sleep(1500);
        const [before, started] = [sample(), performance.now()];
        await writeAll(live, write, ++round);
        const [busy, took] = [sample(), performance.now() - started];
        // The same time idle: what the API server spends anyway (its own controllers, GC).
        const idleBefore = sample();
        await sleep(took);
        const idle = sample().map((v, i) => v - (idleBefore[i] ?? 0));
        const per = (i: number) => ((busy[i] ?? 0) - (before[i] ?? 0) - (idle[i] ?? 0)) / n;
        results.set(name, [...(results.get(name) ?? []), per(0)]);
        console.log(
          `${name}: API server ${per(0).toFixed(2)} ms, etcd ${per(1).toFixed(2)} ms CPU per write (${Math.round(took)} ms for ${n})`,
        );
      }
    }
  } finally {
    stopWatching();
  }
  for (const [name, api] of results) {
    const sorted = [...api].sort((a, b) => a - b);
    console.log(
      `${name}: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(2)} ms of API server CPU per write (${api.map((x) => x.toFixed(2)).join(', ')}; ${watching} watching)`,
    );
  }
  return live;
}

/** A CPU profile of the API server while `method` writes every route's status, round after round. */
async function profile(
  kube: LocalKube,
  live: Map<string, Obj>,
  method: string,
  watching: number,
): Promise<void> {
  const call = client(kube);
  const write = methods(call)[method];
  if (!write) throw new Error(`--profile: one of ${Object.keys(methods(call)).join(', ')}`);
  const listed = await call('GET', `${BASE}?limit=1`);
  const stopWatching = watchers(
    kube,
    String((listed.metadata as { resourceVersion?: string }).resourceVersion),
    watching,
  );
  let done = false;
  const raw = new Promise<Buffer>((resolve, reject) => {
    const port = new URL(kube.server).port;
    const headers = { authorization: `Bearer ${kube.adminToken}` };
    const path = `/debug/pprof/profile?seconds=${PROFILE_SECONDS}`;
    request({ host: '127.0.0.1', port, path, ca: readFileSync(kube.ca), headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    })
      .on('error', reject)
      .end();
  }).finally(() => (done = true));
  for (let round = 1000; !done; round++) await writeAll(live, write, round);
  stopWatching();
  const file = join(tmpdir(), `kube-apiserver-${method.replace(/\W+/g, '-')}.pprof`);
  writeFileSync(file, await raw);
  console.log(`profile of the API server during ${method}: ${file} (go tool pprof -top ${file})`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      routes: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '3' },
      watchers: { type: 'string', default: '1' },
      profile: { type: 'string' },
      steadfast: { type: 'boolean', default: false },
      methods: { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
    },
  });
  const [n, rounds, watching] = [Number(values.routes), Number(values.rounds), Number(values.watchers)];
  const { startLocalKube } = (await import(
    pathToFileURL(join(ROOT, 'scripts', 'kube-local.mjs')).href
  )) as typeof import('../scripts/kube-local.mjs');
  const kube = await startLocalKube({ log: () => {}, profiling: values.profile !== undefined });
  try {
    createRoutes(kube, n, values.steadfast);
    if (values.steadfast) return await measureSteadfast(kube, n, values['cpu-prof-dir']);
    const only = values.methods?.split(',').map((m) => m.trim());
    const live = await measureMethods(kube, n, rounds, watching, only);
    if (values.profile) await profile(kube, live, values.profile, watching);
  } finally {
    await kube.stop();
    rmSync(kube.dir, { recursive: true, force: true });
  }
}

/** N routes to Gateway gw (with `gateway`: the Gateway, its GatewayClass and the Service too). */
function createRoutes(kube: LocalKube, n: number, gateway: boolean): void {
  const routes = Array.from(
    { length: n },
    (_, i) =>
      `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r-${i}","namespace":"default"},"spec":{"parentRefs":[{"name":"gw"}],"hostnames":["h-${i}.example"],"rules":[{"backendRefs":[{"name":"app","port":80}]}]}}`,
  );
  const setup = gateway
    ? [
        `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"steadfast"},"spec":{"controllerName":"${OURS}"}}`,
        `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"gw","namespace":"default"},"spec":{"gatewayClassName":"steadfast","listeners":[{"name":"http","port":10080,"protocol":"HTTP"}]}}`,
        `{"apiVersion":"v1","kind":"Service","metadata":{"name":"app","namespace":"default"},"spec":{"ports":[{"port":80}]}}`,
      ]
    : [];
  execFileSync(
    join(ROOT, '.tools', 'bin', 'kubectl'),
    ['--kubeconfig', kube.adminConfig, 'create', '-f', '-'],
    {
      input: `{"apiVersion":"v1","kind":"List","items":[${[...setup, ...routes].join(',')}]}`,
      stdio: ['pipe', 'ignore', 'inherit'],
    },
  );
}

type Leadership = { statusWrites: number; statusPending: number };

async function leadership(port: number): Promise<Leadership | undefined> {
  return new Promise((resolve) => {
    httpRequest({ host: '127.0.0.1', port, path: '/readyz', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve((JSON.parse(Buffer.concat(chunks).toString()) as { leadership?: Leadership }).leadership);
        } catch {
          resolve(undefined);
        }
      });
    })
      .on('error', () => resolve(undefined))
      .end();
  });
}

/**
 * steadfast, the API server and etcd: CPU per status write from the first write /readyz shows
 * to the last (the first generation's compile is over before its first write).
 */
async function measureSteadfast(kube: LocalKube, n: number, profileDir: string | undefined): Promise<void> {
  const adminPort = await freePort();
  const cli = startCli(
    [
      'serve',
      ...['--kubeconfig', kube.steadfastConfig, '--kube-api-qps', '-1'],
      ...['--admin-port', String(adminPort), '--ext-proc-address', '127.0.0.1:0'],
    ],
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  try {
    const pids = [String(cli.child.pid), ...serverPids(kube)];
    let first: { at: number; writes: number; cpu: number[] } | undefined;
    for (const t0 = performance.now(); performance.now() - t0 < 600_000; await sleep(50)) {
      if (!cli.alive()) throw new Error(`steadfast exited: ${cli.output().slice(-1000)}`);
      const l = await leadership(adminPort);
      if (!l || l.statusWrites === 0) continue;
      const cpu = pids.map(cpuMs);
      first ??= { at: performance.now(), writes: l.statusWrites, cpu };
      if (l.statusPending > 0 || l.statusWrites < n) continue;
      const writes = l.statusWrites - first.writes;
      const per = cpu.map((v, i) => ((v - (first?.cpu[i] ?? 0)) / writes).toFixed(2));
      console.log(
        `steadfast wrote ${l.statusWrites} statuses (${writes} timed, ${Math.round(performance.now() - first.at)} ms): CPU per write steadfast ${per[0]} ms, API server ${per[1]} ms, etcd ${per[2]} ms`,
      );
      return;
    }
    throw new Error('steadfast did not write every status within 600 s');
  } finally {
    await stopCli(cli.child);
  }
}

await main();
