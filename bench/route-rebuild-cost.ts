// Envoy's own CPU to rebuild a route table per update (docs/fleet.md, "What Envoy's rebuild of a
// route table is made of"): bench:scale's N routes (each its own hostname, one rule with
// retries) compiled by gateway mode, their route configuration given to Envoy (`--concurrency 1`)
// as a file (`path_config_source`), one route renamed per update, the Envoy process's CPU
// (/proc/PID/stat) from the write until it has taken the update and gone quiet. Two shapes, two
// Envoys side by side, their updates alternating: `one`, as generated (one route per rule, the
// idempotent methods' `reset` added per request by a filter the route switches on), and
// `split`, the shape before it, rebuilt from it (a route for the idempotent methods behind a
// `safe_regex` `:method` matcher, with `reset` in its `retry_on`, then the other methods' route).
//
//   node dist/bench/route-rebuild-cost.js [N=10000] [UPDATES=4] [ROUNDS=2] [SHAPES=split,one]
// SHAPES may add `bare`: `one` without its routes switching the filter on (not the same
// behaviour: what the switch costs).
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateGatewayConfig } from '../extproc/src/envoy/gateway-config.js';
import { IDEMPOTENT_RESET_FILTER_NAME, TYPE_ROUTE_CONFIGURATION } from '../extproc/src/envoy/envoy-names.js';
import { IDEMPOTENT_METHODS } from '../extproc/src/ir/router-plan.js';
import { type EnvoyProcess, startEnvoy } from '../extproc/src/local/envoy-process.js';
import { compileSnapshot } from '../extproc/src/pipeline/snapshot.js';
import type { Json } from '../extproc/src/json.js';
import { quietCpuUs } from './process-cpu.js';
import { baseYaml, routesYaml } from './scale-config.js';
import { freePort, sleep } from './scale-process.js';

/** `bare` (not the same behaviour): `one` without the routes switching the filter on. */
type Shape = 'one' | 'split' | 'bare';
const SHAPES: readonly Shape[] = ['split', 'one', 'bare'];

interface ShapeEnvoy {
  readonly shape: Shape;
  readonly envoy: EnvoyProcess;
  /** What Envoy has now: each update renames one route of it. */
  routeConfig: Json;
  readonly file: string;
  readonly counter: string;
  readonly cpuMs: number[];
}

/** The listener's connection manager in a generated bootstrap (the one port). */
function connectionManager(config: Json): Json {
  const listeners = (config['static_resources'] as Json)['listeners'] as Json[];
  const chains = (listeners[0] as Json)['filter_chains'] as Json[];
  return ((chains[0] as Json)['filters'] as Json[])[0]?.['typed_config'] as Json;
}

/** `retry_on` with `reset` after the connection-level conditions, as the idempotent route had it. */
function withReset(retryOn: string): string {
  const parts = retryOn.split(',');
  parts.splice(parts.indexOf('reset-before-request') + 1, 0, 'reset');
  return parts.join(',');
}

/** One route of the `one` shape as the two of the `split` shape. */
function splitRoute(r: Json): Json[] {
  const perFilter = { ...(r['typed_per_filter_config'] as Json | undefined) };
  if (!(IDEMPOTENT_RESET_FILTER_NAME in perFilter)) return [r];
  delete perFilter[IDEMPOTENT_RESET_FILTER_NAME];
  const { typed_per_filter_config: _, ...rest } = r;
  const other: Json =
    Object.keys(perFilter).length > 0 ? { ...rest, typed_per_filter_config: perFilter } : rest;
  const match = other['match'] as Json;
  const route = other['route'] as Json;
  const policy = route['retry_policy'] as Json;
  const methods = {
    name: ':method',
    string_match: { safe_regex: { regex: `^(${IDEMPOTENT_METHODS.join('|')})$` } },
  };
  const idempotent: Json = {
    ...other,
    name: `${String(other['name'])}/idempotent`,
    match: { ...match, headers: [methods, ...((match['headers'] as Json[] | undefined) ?? [])] },
    route: { ...route, retry_policy: { ...policy, retry_on: withReset(String(policy['retry_on'])) } },
  };
  return [idempotent, other];
}

/** One route of the `one` shape without the reset filter switched on. */
function bareRoute(r: Json): Json[] {
  const twins = splitRoute(r);
  return twins.length === 2 ? twins.slice(1) : twins;
}

function reshaped(rc: Json, shape: Shape): Json {
  if (shape === 'one') return rc;
  const each = shape === 'split' ? splitRoute : bareRoute;
  const hosts = (rc['virtual_hosts'] as Json[]).map((vh) => ({
    ...vh,
    routes: (vh['routes'] as Json[]).flatMap(each),
  }));
  return { ...rc, virtual_hosts: hosts };
}

/** Writes the route configuration as Envoy's file source reads it: a whole new file, renamed into place. */
function writeRoutes(file: string, rc: Json): void {
  writeFileSync(`${file}.tmp`, JSON.stringify({ resources: [{ '@type': TYPE_ROUTE_CONFIGURATION, ...rc }] }));
  renameSync(`${file}.tmp`, file);
}

/** The generated bootstrap for N routes, with its route configuration moved out to a file. */
async function generated(n: number): Promise<{ config: Json; rc: Json }> {
  const [listenerPort, backendPort] = [await freePort(), await freePort()];
  const snap = compileSnapshot([
    { path: 'base.yaml', text: baseYaml(listenerPort, backendPort) },
    { path: 'routes.yaml', text: routesYaml(0, n) },
  ]);
  const key = Buffer.alloc(32, 7).toString('base64');
  const config = generateGatewayConfig(snap.ir, {
    wasmPath: 'filter/build/steadfast.wasm',
    sessionKeys: [key],
  });
  return { config, rc: connectionManager(config)['route_config'] as Json };
}

async function startShape(shape: Shape, config: Json, generatedRc: Json, dir: string): Promise<ShapeEnvoy> {
  const hcm = connectionManager(config);
  const rc = reshaped(generatedRc, shape);
  const file = join(dir, `routes-${shape}.json`);
  writeRoutes(file, rc);
  const name = String(rc['name']);
  const filters = (hcm['http_filters'] as Json[]).filter(
    (f) => shape === 'one' || f['name'] !== IDEMPOTENT_RESET_FILTER_NAME,
  );
  const { route_config: _, ...rest } = hcm;
  const source = {
    path_config_source: { path: file, watched_directory: { path: dir } },
    resource_api_version: 'V3',
  };
  // Two Envoys side by side: each its own admin port.
  const patched: Json = {
    ...structuredClone(config),
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  };
  const listener = ((patched['static_resources'] as Json)['listeners'] as Json[])[0] as Json;
  const chain = (listener['filter_chains'] as Json[])[0] as Json;
  chain['filters'] = [
    {
      name: 'envoy.filters.network.http_connection_manager',
      typed_config: {
        ...rest,
        http_filters: filters,
        rds: { route_config_name: name, config_source: source },
      },
    },
  ];
  const envoy = await startEnvoy({
    config: JSON.stringify(patched),
    args: ['--concurrency', '1'],
    readyTimeoutMs: 600_000,
  });
  const counter = `http.${String(hcm['stat_prefix'])}.rds.${name}.update_success`;
  return { shape, envoy, routeConfig: rc, file, counter, cpuMs: [] };
}

/** One route renamed (the first host's first route): Envoy rebuilds the whole table. */
async function update(s: ShapeEnvoy, k: number): Promise<void> {
  const hosts = s.routeConfig['virtual_hosts'] as Json[];
  const first = hosts[0] as Json;
  const routes = [...(first['routes'] as Json[])];
  const r = routes[routes.length - 1] as Json;
  routes[routes.length - 1] = { ...r, name: `${String(r['name']).replace(/~\d+$/, '')}~${k}` };
  const rc = { ...s.routeConfig, virtual_hosts: [{ ...first, routes }, ...hosts.slice(1)] };
  s.routeConfig = rc;
  const pid = s.envoy.child.pid;
  const taken = (await s.envoy.stats(s.counter)).get(s.counter) ?? 0;
  const before = await quietCpuUs(pid);
  writeRoutes(s.file, rc);
  while (((await s.envoy.stats(s.counter)).get(s.counter) ?? 0) <= taken) await sleep(20);
  s.cpuMs.push(((await quietCpuUs(pid)) - before) / 1000);
}

function rssMb(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

async function main(): Promise<void> {
  const arg = (i: number, fallback: number): number => Number(process.argv[2 + i] ?? fallback);
  const [n, updates, rounds] = [arg(0, 10_000), arg(1, 4), arg(2, 2)];
  const { config, rc } = await generated(n);
  const work = mkdtempSync(join(tmpdir(), 'route-rebuild-'));
  const shapes: ShapeEnvoy[] = [];
  try {
    const wanted = (process.argv[5] ?? 'split,one').split(',') as Shape[];
    for (const shape of SHAPES.filter((x) => wanted.includes(x)))
      shapes.push(await startShape(shape, config, rc, work));
    let k = 0;
    for (let round = 0; round < rounds; round++) {
      for (let u = 0; u < updates; u++) {
        // Each shape's turn moves along: none is always first after a quiet moment.
        const order = shapes.map((_, i) => shapes[(i + round + u) % shapes.length] as ShapeEnvoy);
        for (const s of order) await update(s, ++k);
      }
    }
    for (const s of shapes) {
      const routes = (s.routeConfig['virtual_hosts'] as Json[]).reduce(
        (a, vh) => a + (vh['routes'] as Json[]).length,
        0,
      );
      const sorted = [...s.cpuMs].sort((a, b) => a - b).map((v) => Math.round(v));
      console.log(
        `${s.shape}: ${n} hosts, ${routes} routes: CPU per update ${sorted.join(', ')} ms (median ${sorted[Math.floor(sorted.length / 2)]}); RSS ${rssMb(s.envoy.child.pid)} MB`,
      );
    }
  } finally {
    for (const s of shapes) await s.envoy.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
