// How bench:scale changes the objects it serves: files saved in the directory, or requests to a
// real API server (scripts/kube-local.mjs, a fresh one per measurement) sent by the benchmark
// itself. A change is made ready first (its text or request body built), so that its clock
// starts when the file is saved or the request is sent.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { kubeRequests } from './kube-requests.js';
import { ROUTES_PER_FILE, routesFile, routesYaml, save } from './scale-config.js';
import { ROOT } from './scale-process.js';
import { scaleRouteYaml } from './scale-routes.js';

/** A change made ready: calling it saves the file or sends the request, and resolves once that is done. */
export type Change = () => Promise<void>;

/** One route added, one route's path set to `path`, the added route removed. */
export interface Changes {
  add(i: number): Change;
  edit(i: number, path: string): Change;
  remove(i: number): Change;
  /** Before a timed change: what it goes through is open (the API server's connection), so its clock holds the change alone. */
  ready(): Promise<void>;
  close(): void;
}

const saved =
  (write: () => void): Change =>
  () =>
    Promise.resolve(write());

export function fileChanges(dir: string, n: number): Changes {
  return {
    // One route more, in a file of its own.
    add: (i) => {
      const text = scaleRouteYaml(i);
      return saved(() => save(dir, 'added.yaml', text));
    },
    // One route edited in its file (the whole file is written again, as a deploy does).
    edit: (i, path) => {
      const text = routesYaml(Math.floor(i / ROUTES_PER_FILE) * ROUTES_PER_FILE, n, { i, path });
      return saved(() => save(dir, routesFile(i), text));
    },
    // The added route's file removed.
    remove: () => saved(() => rmSync(join(dir, 'added.yaml'))),
    ready: () => Promise.resolve(),
    close: () => undefined,
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

/** A fresh API server holding every object of `dir`'s files, created before steadfast starts. */
export async function startKubeWith(dir: string): Promise<LocalKube> {
  const kube = await (await kubeLocal()).startLocalKube({ log: () => {} });
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.yaml'))
    .sort())
    kubectl(kube, ['create', '-f', join(dir, f)]);
  return kube;
}

/**
 * steadfast's flags for the API server: its requests paced at up to `qps` a second, 2,000 by
 * default, as a fleet of thousands of routes should run it (at the CLI's default of 20 a second,
 * 10,000 route statuses take 500 s).
 */
export function kubeSource(kube: LocalKube, qps = '2000', burst = '2000'): string[] {
  return ['--kubeconfig', kube.steadfastConfig, '--kube-api-qps', qps, '--kube-api-burst', burst];
}

export async function stopKube(kube: LocalKube | undefined): Promise<void> {
  await kube?.stop();
  if (kube) rmSync(kube.dir, { recursive: true, force: true });
}

const ROUTES = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';

/** The JSON patch that sets route-i's first path to `path`. */
const pathPatch = (path: string) => [
  { op: 'replace', path: '/spec/rules/0/matches/0/path/value', value: path },
];

/**
 * Changes made by the benchmark's own requests (the admin's token, one kept-alive connection):
 * the create, JSON patch and delete kubectl would send, without kubectl's process start,
 * kubeconfig read and discovery before them.
 */
export function kubeChanges(kube: LocalKube): Changes {
  const api = kubeRequests(kube);
  const sent =
    (method: string, path: string, body?: unknown, type?: string): Change =>
    async () => {
      await api.send(method, path, body, type);
    };
  return {
    add: (i) => sent('POST', ROUTES, parse(scaleRouteYaml(i))),
    edit: (i, path) => sent('PATCH', `${ROUTES}/route-${i}`, pathPatch(path), 'application/json-patch+json'),
    remove: (i) => sent('DELETE', `${ROUTES}/route-${i}`),
    ready: sent('GET', '/api/v1/namespaces/default'),
    close: () => api.close(),
  };
}

/** What kubectl's process costs around one request: the two measured alternately, `rounds` times each. */
export interface KubectlCost {
  /** `kubectl patch --dry-run=server` of one route, from its start to its exit. */
  readonly kubectl: number[];
  /** The same request (`dryRun=All`) sent by the benchmark, from sending to the answer read. */
  readonly request: number[];
}

/** route-i's path patched without being stored (a dry run: no watch event), by kubectl and directly. */
export async function kubectlCost(kube: LocalKube, i: number, rounds: number): Promise<KubectlCost> {
  const api = kubeRequests(kube);
  const patch = pathPatch(`/dry-run/${i}`);
  const out: KubectlCost = { kubectl: [], request: [] };
  try {
    await api.send('GET', '/api/v1/namespaces/default');
    for (let k = 0; k < rounds; k++) {
      let t0 = performance.now();
      const args = ['patch', 'httproute', `route-${i}`, '--dry-run=server', '--type=json'];
      kubectl(kube, [...args, '-p', JSON.stringify(patch)]);
      out.kubectl.push((performance.now() - t0) / 1000);
      t0 = performance.now();
      await api.send('PATCH', `${ROUTES}/route-${i}?dryRun=All`, patch, 'application/json-patch+json');
      out.request.push((performance.now() - t0) / 1000);
    }
  } finally {
    api.close();
  }
  return out;
}

/** Each API server's reader of route status, kept for its polls. */
const statusReaders = new WeakMap<LocalKube, ReturnType<typeof kubeRequests>>();

/**
 * Whether route-i's status has steadfast's entry: a GET on a kept-alive connection. It is polled
 * every 20 ms while the statuses are written, and a kubectl per poll (its start, its discovery)
 * took CPU from the API server whose writes it timed.
 */
export async function statusWritten(kube: LocalKube, i: number): Promise<boolean> {
  let api = statusReaders.get(kube);
  if (!api) statusReaders.set(kube, (api = kubeRequests(kube)));
  const route = (await api.send('GET', `${ROUTES}/route-${i}`)) as {
    status?: { parents?: { controllerName?: string }[] };
  };
  return (route.status?.parents ?? []).some((p) => p.controllerName === 'steadfast.dev/gateway-controller');
}
