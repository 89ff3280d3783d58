// Envoy's own apply of one virtual host over delta ADS (VHDS) at N hosts, by route shape
// (docs/fleet.md, "What Envoy's apply of one virtual host is made of"): bench:scale's N routes
// compiled by gateway mode, each shape (vhds-shapes.ts) fed to its own Envoy (default
// concurrency, as the fleet's) by a minimal delta ADS server in this process (vhds-feed.ts):
// the route configuration without hosts, all hosts in one push, then one edited host per push.
// Per push: the Envoy process's CPU (/proc) from before the push until it has answered and used
// no CPU for 300 ms, that of its main thread alone (where the update is applied and answered;
// the workers drop the old table), and its answer's time after HTTP/2 took the push (as
// bench:scale --fleet's "own apply"). The shapes' pushes alternate, their turn moving along.
//
// With `tip` after the shapes, each shape's Envoy is then given a change of its route
// configuration's `reset` switch as the ADS server sends one (every host in its bridge form in one
// push, then the head), each step measured the same way.
//
//   node dist/bench/vhds-apply-cost.js [N=10000] [UPDATES=4] [ROUNDS=2] [SHAPES=sent,no-switch] [tip]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { TYPE_ROUTE_CONFIGURATION } from '../extproc/src/envoy/envoy-names.js';
import { generateGatewayConfig } from '../extproc/src/envoy/gateway-config.js';
import { TYPE_VIRTUAL_HOST, VHDS } from '../extproc/src/envoy/xds-resources.js';
import type { Json } from '../extproc/src/json.js';
import { type EnvoyProcess, startEnvoy } from '../extproc/src/local/envoy-process.js';
import { compileSnapshot } from '../extproc/src/pipeline/snapshot.js';
import type { Any } from '../extproc/src/xds/ads-resource.js';
import { encodeAny } from '../extproc/src/xds/envoy-protos.js';
import { processCpuUs, quietCpuUs } from './process-cpu.js';
import { baseYaml, routesYaml } from './scale-config.js';
import { freePort, status } from './scale-process.js';
import { type PushTimes, VhdsFeed } from './vhds-feed.js';
import { type RouteTable, SHAPES, type Shape, shaped, tipped } from './vhds-shapes.js';

interface ShapeEnvoy {
  readonly shape: Shape;
  readonly table: RouteTable;
  readonly envoy: EnvoyProcess;
  readonly listenerPort: number;
  readonly cpuMs: number[];
  /** Of it, the main thread's. */
  readonly mainMs: number[];
  readonly answerMs: number[];
  /** The last edit: its host's index and path. */
  last?: { readonly i: number; readonly path: string };
}

/** The listener's connection manager in a generated bootstrap (the one port). */
function connectionManager(config: Json): Json {
  const listeners = (config['static_resources'] as Json)['listeners'] as Json[];
  const chains = (listeners[0] as Json)['filter_chains'] as Json[];
  return ((chains[0] as Json)['filters'] as Json[])[0]?.['typed_config'] as Json;
}

/** The generated bootstrap for N routes, and its route table as delta ADS sends it. */
async function generated(n: number): Promise<{ config: Json; table: RouteTable }> {
  const [listenerPort, backendPort] = [await freePort(), await freePort()];
  const snap = compileSnapshot([
    { path: 'base.yaml', text: baseYaml(listenerPort, backendPort) },
    { path: 'routes.yaml', text: routesYaml(0, n) },
  ]);
  const config = generateGatewayConfig(snap.ir, {
    wasmPath: 'filter/build/steadfast.wasm',
    sessionKeys: [Buffer.alloc(32, 7).toString('base64')],
  });
  const { virtual_hosts: hosts, ...head } = connectionManager(config)['route_config'] as Json;
  const rc = String(head['name']);
  const named = (hosts as Json[]).map((host) => ({ name: `${rc}/${String(host['name'])}`, host }));
  return { config, table: { head: { ...head, vhds: VHDS }, hosts: named } };
}

function encodedHost(name: string, host: Json): Any {
  return encodeAny({ '@type': TYPE_VIRTUAL_HOST, ...host, name }, name);
}

/** The bootstrap of one shape's Envoy: the generated one, its routes over delta ADS from `adsPort`. */
function bootstrap(config: Json, rc: string, node: string, adsPort: number, listenerPort: number): Json {
  const patched = structuredClone(config);
  patched['admin'] = { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } };
  patched['node'] = { id: node, cluster: 'vhds-apply-cost' };
  const statics = patched['static_resources'] as Json;
  const listener = (statics['listeners'] as Json[])[0] as Json;
  (listener['address'] as { socket_address: Json }).socket_address['port_value'] = listenerPort;
  const hcm = connectionManager(patched);
  delete hcm['route_config'];
  hcm['rds'] = { route_config_name: rc, config_source: { ads: {}, resource_api_version: 'V3' } };
  statics['clusters'] = [
    ...(statics['clusters'] as Json[]),
    {
      name: 'vhds-apply-cost-ads',
      type: 'STATIC',
      load_assignment: {
        cluster_name: 'vhds-apply-cost-ads',
        endpoints: [
          {
            lb_endpoints: [
              { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: adsPort } } } },
            ],
          },
        ],
      },
      typed_extension_protocol_options: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
          explicit_http_config: { http2_protocol_options: {} },
        },
      },
    },
  ];
  patched['dynamic_resources'] = {
    ads_config: {
      api_type: 'DELTA_GRPC',
      transport_api_version: 'V3',
      grpc_services: [{ envoy_grpc: { cluster_name: 'vhds-apply-cost-ads' } }],
    },
  };
  return patched;
}

async function startShape(
  feed: VhdsFeed,
  shape: Shape,
  config: Json,
  table: RouteTable,
  adsPort: number,
): Promise<ShapeEnvoy> {
  const t = shaped(table, shape);
  const rc = String(t.head['name']);
  const head = { name: rc, any: encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...t.head }, rc) };
  feed.register(shape, {
    head,
    hosts: new Map(t.hosts.map(({ name, host }) => [name, encodedHost(name, host)])),
  });
  const listenerPort = await freePort();
  const envoy = await startEnvoy({
    config: JSON.stringify(bootstrap(config, rc, shape, adsPort, listenerPort)),
    readyTimeoutMs: 600_000,
  });
  await (
    await feed.stream(shape)
  ).ready;
  return { shape, table: t, envoy, listenerPort, cpuMs: [], mainMs: [], answerMs: [] };
}

/** Host i's first route at a new path: one edited route, as bench:scale's edit. */
function edited(host: Json, path: string): Json {
  const [first, ...rest] = host['routes'] as Json[];
  return { ...host, routes: [{ ...first, match: { path_separated_prefix: path } }, ...rest] };
}

async function update(feed: VhdsFeed, s: ShapeEnvoy, k: number): Promise<void> {
  const i = (k * 7919) % s.table.hosts.length;
  const { name, host } = s.table.hosts[i] as RouteTable['hosts'][number];
  const path = `/edited/${k}`;
  const any = encodedHost(name, edited(host, path));
  const pid = s.envoy.child.pid;
  const before = await quietCpuUs(pid);
  const mainBefore = processCpuUs(pid, pid) ?? 0;
  const t = await feed.pushHost(s.shape, name, any);
  s.cpuMs.push(((await quietCpuUs(pid)) - before) / 1000);
  s.mainMs.push(((processCpuUs(pid, pid) ?? 0) - mainBefore) / 1000);
  s.answerMs.push(t.answeredAt - t.writtenAt);
  s.last = { i, path };
}

/** One push's Envoy CPU (and its main thread's) until quiet, and its answer after the write, in ms. */
async function measured(s: ShapeEnvoy, push: () => Promise<PushTimes>): Promise<string> {
  const pid = s.envoy.child.pid;
  const before = await quietCpuUs(pid);
  const mainBefore = processCpuUs(pid, pid) ?? 0;
  const t = await push();
  const cpu = ((await quietCpuUs(pid)) - before) / 1000;
  const main = ((processCpuUs(pid, pid) ?? 0) - mainBefore) / 1000;
  return `CPU ${Math.round(cpu)} ms (main thread ${Math.round(main)}), answer ${Math.round(t.answeredAt - t.writtenAt)} ms`;
}

/** A change of the switch as the ADS server sends it: the bridge (every host), then the head. */
async function tip(feed: VhdsFeed, s: ShapeEnvoy): Promise<string> {
  const t = tipped(s.table);
  const stream = await feed.stream(s.shape);
  const hosts = t.hosts.map(({ name, host }) => [name, encodedHost(name, host)] as const);
  const bridge = await measured(s, () => stream.push(TYPE_VIRTUAL_HOST, hosts));
  const rc = String(t.head['name']);
  const head = encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...t.head }, rc);
  const turned = await measured(s, () => stream.push(TYPE_ROUTE_CONFIGURATION, [[rc, head]]));
  return `${s.shape}: the switch changed: the bridge's ${hosts.length} hosts ${bridge}; the head ${turned}`;
}

function rssMb(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

function summary(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b).map((v) => Math.round(v));
  return `${sorted.join(', ')} (median ${sorted[Math.floor(sorted.length / 2)]})`;
}

/** The last edit is served: its host answers its new path (the backend is down: 503, not 404). */
async function servesLastEdit(s: ShapeEnvoy): Promise<boolean> {
  if (!s.last) return true;
  const domains = s.table.hosts[s.last.i]?.host['domains'] as string[];
  return (await status(s.listenerPort, String(domains[0]), s.last.path)) !== 404;
}

async function main(): Promise<void> {
  const arg = (i: number, fallback: number): number => Number(process.argv[2 + i] ?? fallback);
  const [n, updates, rounds] = [arg(0, 10_000), arg(1, 4), arg(2, 2)];
  const wanted = (process.argv[5] ?? 'sent,no-switch').split(',');
  const unknown = wanted.filter((w) => !(SHAPES as readonly string[]).includes(w));
  if (unknown.length > 0)
    throw new Error(`unknown shapes ${unknown.join(', ')}; shapes: ${SHAPES.join(', ')}`);
  const { config, table } = await generated(n);
  const feed = new VhdsFeed();
  const adsPort = await feed.listen();
  const shapes: ShapeEnvoy[] = [];
  try {
    for (const shape of SHAPES.filter((x) => wanted.includes(x)))
      shapes.push(await startShape(feed, shape, config, table, adsPort));
    let k = 0;
    for (let round = 0; round < rounds; round++) {
      for (let u = 0; u < updates; u++) {
        // Each shape's turn moves along: none is always first after a quiet moment.
        const order = shapes.map((_, j) => shapes[(j + round + u) % shapes.length] as ShapeEnvoy);
        for (const s of order) await update(feed, s, ++k);
      }
    }
    for (const s of shapes) {
      if (!(await servesLastEdit(s))) throw new Error(`${s.shape}: the last edit is not served`);
      console.log(
        `${s.shape}: ${n} hosts: CPU per update ${summary(s.cpuMs)} ms, of it the main thread's ${summary(s.mainMs)} ms; answer after the write ${summary(s.answerMs)} ms; RSS ${rssMb(s.envoy.child.pid)} MB`,
      );
    }
    if (process.argv[6] === 'tip') for (const s of shapes) console.log(await tip(feed, s));
  } finally {
    for (const s of shapes) await s.envoy.stop();
    feed.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
