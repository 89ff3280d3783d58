// How bench:scale changes the objects it serves: files saved in the directory, or kubectl
// against a real API server (scripts/kube-local.mjs, a fresh one per measurement).
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LocalKube } from '../scripts/kube-local.mjs';
import { ROUTES_PER_FILE, routesFile, routesYaml, save } from './scale-config.js';
import { ROOT } from './scale-process.js';
import { scaleRouteYaml } from './scale-routes.js';

/** One route added, one route's path set to `path`, the added route removed. */
export interface Changes {
  add(i: number): void;
  edit(i: number, path: string): void;
  remove(i: number): void;
}

export function fileChanges(dir: string, n: number): Changes {
  return {
    // One route more, in a file of its own.
    add: (i) => save(dir, 'added.yaml', scaleRouteYaml(i)),
    // One route edited in its file (the whole file is written again, as a deploy does).
    edit: (i, path) =>
      save(dir, routesFile(i), routesYaml(Math.floor(i / ROUTES_PER_FILE) * ROUTES_PER_FILE, n, { i, path })),
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

export function kubeChanges(kube: LocalKube): Changes {
  return {
    add: (i) => kubectl(kube, ['create', '-f', '-'], scaleRouteYaml(i)),
    edit: (i, path) =>
      kubectl(kube, [
        'patch',
        'httproute',
        `route-${i}`,
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'replace', path: '/spec/rules/0/matches/0/path/value', value: path }]),
      ]),
    remove: (i) => kubectl(kube, ['delete', 'httproute', `route-${i}`]),
  };
}

/** Whether route-i's status has steadfast's entry, read with kubectl. */
export function statusWritten(kube: LocalKube, i: number): boolean {
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
