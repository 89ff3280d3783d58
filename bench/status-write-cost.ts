// The API server's CPU per HTTPRoute status write, by the method a controller may use on the
// status subresource: update (PUT of the object with its resourceVersion, as the status writer
// does), JSON merge patch of status (with metadata.resourceVersion, so a concurrent writer gets
// 409 as with PUT), and server-side apply (force). On a fresh local API server
// (scripts/kube-local.mjs): N routes, each method writing every route's status once per round
// (8 at a time, a changed message each time), the methods in turn; kube-apiserver's and etcd's
// CPU time (/proc) over each run less an idle run of the same length, divided by N.
//
//   node dist/bench/status-write-cost.js [N=1000] [ROUNDS=3]
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { ROOT } from './scale-process.js';

type Obj = { metadata: { name: string; resourceVersion: string; generation: number } } & Record<
  string,
  unknown
>;
type Write = (o: Obj, round: number) => Promise<Obj>;

const BASE = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';
const CONCURRENCY = 8;

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

function client(kube: LocalKube) {
  const ca = readFileSync(kube.ca);
  const port = new URL(kube.server).port;
  return (method: string, path: string, body?: unknown, type = 'application/json') =>
    new Promise<Obj & { items?: Obj[] }>((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const headers = { authorization: `Bearer ${kube.adminToken}`, 'content-type': type };
      const req = request({ host: '127.0.0.1', port, method, path, ca, headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          (res.statusCode ?? 500) >= 300
            ? reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`))
            : resolve(JSON.parse(text) as Obj),
        );
      });
      req.on('error', reject);
      req.end(data);
    });
}

function status(round: number, generation: number): Record<string, unknown> {
  const condition = (type: string, message: string, at: string) => ({
    ...{
      type,
      status: 'True',
      reason: type,
      message,
      observedGeneration: generation,
      lastTransitionTime: at,
    },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    parents: [
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
        controllerName: 'steadfast.dev/gateway-controller',
        conditions: [
          condition('Accepted', `accepted (round ${round})`, now),
          condition('ResolvedRefs', 'resolved', '2026-01-01T00:00:00Z'),
        ],
      },
    ],
  };
}

function methods(call: ReturnType<typeof client>): Record<string, Write> {
  const path = (o: Obj) => `${BASE}/${o.metadata.name}/status`;
  return {
    update: (o, round) => {
      // As the status writer sends it: the object from its cache, without managedFields.
      const { managedFields: _mf, ...metadata } = o.metadata as Obj['metadata'] & { managedFields?: unknown };
      return call('PUT', path(o), { ...o, metadata, status: status(round, o.metadata.generation) });
    },
    'merge patch': (o, round) =>
      call(
        'PATCH',
        path(o),
        {
          metadata: { resourceVersion: o.metadata.resourceVersion },
          status: status(round, o.metadata.generation),
        },
        'application/merge-patch+json',
      ),
    'server-side apply': (o, round) =>
      call(
        'PATCH',
        `${path(o)}?fieldManager=steadfast&force=true`,
        {
          ...{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' },
          metadata: { name: o.metadata.name, namespace: 'default' },
          status: status(round, o.metadata.generation),
        },
        'application/apply-patch+yaml',
      ),
  };
}

async function main(): Promise<void> {
  const [n, rounds] = [Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 3)];
  const { startLocalKube } = (await import(
    pathToFileURL(join(ROOT, 'scripts', 'kube-local.mjs')).href
  )) as typeof import('../scripts/kube-local.mjs');
  const kube = await startLocalKube({ log: () => {} });
  try {
    const routes = Array.from(
      { length: n },
      (_, i) =>
        `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r-${i}","namespace":"default"},"spec":{"parentRefs":[{"name":"gw"}],"hostnames":["h-${i}.example"],"rules":[{"backendRefs":[{"name":"app","port":80}]}]}}`,
    );
    execFileSync(
      join(ROOT, '.tools', 'bin', 'kubectl'),
      ['--kubeconfig', kube.adminConfig, 'apply', '-f', '-'],
      {
        input: `{"apiVersion":"v1","kind":"List","items":[${routes.join(',')}]}`,
        stdio: ['pipe', 'ignore', 'inherit'],
      },
    );
    await measure(kube, n, rounds);
  } finally {
    await kube.stop();
  }
}

async function measure(kube: LocalKube, n: number, rounds: number): Promise<void> {
  const call = client(kube);
  const live = new Map(((await call('GET', BASE)).items ?? []).map((o) => [o.metadata.name, o]));
  const pids = [
    pidWith(`--secure-port=${new URL(kube.server).port}`),
    pidWith(`--listen-client-urls=${kube.etcd}`),
  ];
  const sample = () => pids.map(cpuMs);
  const results = new Map<string, { api: number; etcd: number }[]>();
  let round = 0;
  for (let r = 0; r < rounds; r++) {
    for (const [name, write] of Object.entries(methods(call))) {
      await new Promise((done) => setTimeout(done, 1500));
      const [before, started] = [sample(), performance.now()];
      const queue = [...live.values()];
      round++;
      const worker = async () => {
        for (let o = queue.shift(); o; o = queue.shift()) live.set(o.metadata.name, await write(o, round));
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const [busy, took] = [sample(), performance.now() - started];
      // The same time idle: what the API server spends anyway (its own controllers, GC).
      const idleBefore = sample();
      await new Promise((done) => setTimeout(done, took));
      const idle = sample().map((v, i) => v - (idleBefore[i] ?? 0));
      const per = (i: number) => ((busy[i] ?? 0) - (before[i] ?? 0) - (idle[i] ?? 0)) / n;
      const row = { api: per(0), etcd: per(1) };
      results.set(name, [...(results.get(name) ?? []), row]);
      console.log(
        `${name}: API server ${row.api.toFixed(2)} ms, etcd ${row.etcd.toFixed(2)} ms CPU per write (${Math.round(took)} ms for ${n})`,
      );
    }
  }
  for (const [name, rows] of results) {
    const api = rows.map((x) => x.api).sort((a, b) => a - b);
    console.log(
      `${name}: median ${api[Math.floor(api.length / 2)]?.toFixed(2)} ms of API server CPU per write (${api.map((x) => x.toFixed(2)).join(', ')})`,
    );
  }
}

await main();
