// `bench:scale --fleet`: the control plane as a fleet meets it, at one number of routes.
// `serve --xds` (delta ADS, loopback) is started; at /readyz one real Envoy, timed until it
// serves the last route; with that Envoy alone the control plane's memory at rest; then a
// second real Envoy and the lightweight clients (20 Envoys in all by default), the memory
// again (both after full GCs, until memory stops falling); then one route added, edited and deleted, again and again, each timed until it
// answers (or stops answering) through both real Envoys and counted in encoded resource bytes per Envoy from
// /v1/xds; an EndpointSlice change (files); and last a third real Envoy, timed from its
// start until it serves the last route. Numbers, never assertions.
import { median } from './round-stats.js';
import { baseYaml, ENDPOINTS, save } from './scale-config.js';
import type { Provider } from './scale-config.js';
import {
  type Fleet,
  NEW_ENVOY_ADDRESS,
  REAL_ENVOY_ADDRESSES,
  answers,
  addRealEnvoy,
  connectLightClients,
  startControlPlane,
  servedOnEachEnvoy,
  startRealEnvoy,
  stopFleet,
  untilOnEveryEnvoy,
} from './scale-fleet-setup.js';
import {
  type ChangeStages,
  changeStages,
  epochMs,
  slowChangeLine,
  slowestChanges,
  stageMedians,
} from './scale-fleet-stages.js';
import { providerSettle } from './scale-fleet-settle.js';
import { monotonicToEpochMs, profileSummary, startProfile, writeProfile } from './scale-fleet-profile.js';
import {
  type ChangeCpu,
  type ChangeGc,
  type FleetParts,
  type OldSpace,
  ChangeCpuMeter,
  changeGc,
  cpuMedians,
  fleetParts,
} from './scale-fleet-cpu.js';
import type { ChangeKind, ChangeTimes, FleetRow, MemoryPoint, SentPerChange } from './scale-fleet-row.js';
import { generations, sentBetween, xdsDelivered, xdsStatus } from './scale-fleet-xds.js';
import { type Change, kubectlCost, statusWritten } from './scale-changes.js';
import {
  type LiveMemory,
  collectGarbage,
  collectWorkersGarbage,
  inspectorUrl,
  memoryUsage,
} from './inspector-gc.js';
import { envoyPid, memoryMiB, resetPeak, sleep, timedChange, until } from './scale-process.js';

export interface FleetOptions {
  /** How many times each of add, edit and delete is timed. */
  readonly changes: number;
  readonly lightClients: number;
  /** Flags for `serve`'s Node. */
  readonly serveNodeArgs: readonly string[];
  /** Profile steadfast's service thread over the timed changes, to `<this>-<routes>.cpuprofile` (scale-fleet-profile.ts). */
  readonly profileChanges?: string;
}

const KINDS: readonly ChangeKind[] = ['add', 'edit', 'delete'];
/** How many dry-run patches are timed with kubectl, and as many sent directly. */
const KUBECTL_ROUNDS = 5;

/** After a full GC, before memory is read: V8 frees dead Buffers' memory in a task after it, and hands pages back. */
const GC_SETTLE_MS = 2000;
/** At most this many full GCs before memory at rest is read (liveAfterGc). */
const MAX_GCS = 6;
const MIB = 1024 * 1024;

/** The nearest-rank percentile. */
function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

const times = (seconds: readonly number[]): ChangeTimes => ({
  seconds,
  median: median(seconds) ?? Number.NaN,
  p95: percentile(seconds, 95),
});

const medianSent = (xs: readonly SentPerChange[]): SentPerChange => ({
  resources: median(xs.map((x) => x.resources)) ?? Number.NaN,
  bytes: median(xs.map((x) => x.bytes)) ?? Number.NaN,
});

/** `serve` until /readyz, then the first Envoy until it serves the last route, from `serve`'s start. */
async function startServing(fleet: Fleet): Promise<{ ready: number; firstServed: number }> {
  const last = fleet.n - 1;
  await until(
    `serve at ${fleet.n} routes: /readyz`,
    fleet.limitMs,
    async () =>
      (await fetch(`http://127.0.0.1:${fleet.adminPort}/readyz`).catch(() => undefined))?.ok === true,
    fleet.cli.alive,
  );
  const ready = (performance.now() - fleet.startedAt) / 1000;
  const address = REAL_ENVOY_ADDRESSES[0];
  await addRealEnvoy(fleet, address);
  await until(
    `the first Envoy: the last route`,
    fleet.limitMs,
    () => answers(fleet, address, last, `/r/${last}`, 200),
    fleet.cli.alive,
  );
  return { ready, firstServed: (performance.now() - fleet.startedAt) / 1000 };
}

/**
 * The second real Envoy, then the lightweight clients, each step until every Envoy took the
 * generation; the memory after each (the peak since the one before).
 */
async function connectTheRest(
  fleet: Fleet,
  lightClients: number,
): Promise<{ two: MemoryPoint; all: MemoryPoint }> {
  await addRealEnvoy(fleet, REAL_ENVOY_ADDRESSES[1]);
  const last = fleet.n - 1;
  await untilOnEveryEnvoy(fleet, last, `/r/${last}`, 200);
  await xdsDelivered(fleet.adminPort, fleet.real.length, fleet.limitMs);
  const two = await restingMiB(fleet);
  resetPeak(fleet.cli.child.pid);
  connectLightClients(fleet, lightClients);
  await xdsDelivered(fleet.adminPort, fleet.real.length + lightClients, fleet.limitMs);
  return { two, all: await restingMiB(fleet) };
}

interface Measured {
  /** From the file saved or the request sent until both real Envoys serve it. */
  readonly seconds: number;
  /** From the same moment until the save or the request was done. */
  readonly madeSeconds: number;
  readonly real: SentPerChange[];
  readonly light: SentPerChange[];
  /** Where its time went (a timed change only): the control plane's stages, each part's CPU, GC. */
  readonly stages?: ChangeStages;
  readonly cpu?: ChangeCpu;
  readonly gc?: ChangeGc;
  /** From its start until both Envoys served it (epoch ms). */
  readonly window?: readonly [number, number];
}

/** What a timed change reads besides the control plane's stages: its parts' CPU, steadfast's GC. */
interface Watched {
  readonly parts: FleetParts;
  readonly inspector: string;
  /** steadfast's threads' old space at the last change read (changeGc). */
  readonly oldSpace: OldSpace;
}

/** One change made, timed on the real Envoys, then waited for on every Envoy and counted. */
async function oneChange(
  fleet: Fleet,
  make: Change,
  check: { i: number; path: string; want: number } | undefined,
  watched?: Watched,
): Promise<Measured> {
  const envoys = fleet.real.length + fleet.light.length;
  const gone = fleet.light.find((c) => c.ended !== undefined);
  if (gone) throw new Error(`a lightweight client's stream ended: ${gone.ended ?? ''}`);
  const before = await xdsDelivered(fleet.adminPort, envoys, fleet.limitMs);
  await fleet.changes.ready();
  let servedAt: number[] = [];
  const meter = check && watched ? new ChangeCpuMeter(watched.parts) : undefined;
  const at = epochMs();
  const clock = await timedChange(make, async () => {
    if (check) servedAt = await servedOnEachEnvoy(fleet, check.i, check.path, check.want);
  });
  const [cpu, end] = [meter?.read(), epochMs()];
  const after = await xdsDelivered(fleet.adminPort, envoys, fleet.limitMs, generations(before));
  const sent = sentBetween(before, after);
  const real = new Set(fleet.real.map((r) => r.node));
  const of = (keep: (node: string) => boolean) => [...sent].filter(([node]) => keep(node)).map(([, s]) => s);
  const nodes = fleet.real.map((r) => r.node);
  const stages = check ? changeStages(at, await xdsStatus(fleet.adminPort), nodes, servedAt) : undefined;
  const gc = meter && watched ? await changeGc(watched.inspector, at, end, watched.oldSpace) : undefined;
  return {
    seconds: check ? clock.seconds : Number.NaN,
    madeSeconds: clock.madeSeconds,
    real: of((n) => real.has(n)),
    light: of((n) => !real.has(n)),
    ...(stages ? { stages } : {}),
    ...(cpu ? { cpu } : {}),
    ...(gc ? { gc } : {}),
    ...(check ? { window: [at, end] as const } : {}),
  };
}

/** Route n added, route n-1's path edited, route n deleted: `count` times each, in turn. */
async function timeChanges(
  fleet: Fleet,
  count: number,
  watched: Watched,
): Promise<Record<ChangeKind, Measured[]>> {
  const { n } = fleet;
  const last = n - 1;
  const out: Record<ChangeKind, Measured[]> = { add: [], edit: [], delete: [] };
  for (let k = 0; k < count; k++) {
    const path = `/edited-${k}/${last}`;
    const [added, gone] = [
      { i: n, path: `/r/${n}`, want: 200 },
      { i: n, path: `/r/${n}`, want: 404 },
    ];
    out.add.push(await oneChange(fleet, fleet.changes.add(n), added, watched));
    out.edit.push(
      await oneChange(fleet, fleet.changes.edit(last, path), { i: last, path, want: 200 }, watched),
    );
    out.delete.push(await oneChange(fleet, fleet.changes.remove(n), gone, watched));
  }
  return out;
}

/** The Service's slice down to one endpoint and back, twice (files: a Kubernetes slice here is an FQDN, no EDS). */
async function endpointChanges(fleet: Fleet, backendPort: number): Promise<SentPerChange | undefined> {
  if (fleet.provider !== 'files') return undefined;
  const sent: SentPerChange[] = [];
  for (const endpoints of [[ENDPOINTS[0]], ENDPOINTS, [ENDPOINTS[0]], ENDPOINTS]) {
    const yaml = baseYaml(fleet.listenerPort, backendPort, 'files', endpoints);
    const make = () => Promise.resolve(save(fleet.dir, 'base.yaml', yaml));
    sent.push(...(await oneChange(fleet, make, undefined)).real);
  }
  return medianSent(sent);
}

/** A third real Envoy, from its start until its last route answers, and what it was sent. */
async function newEnvoy(fleet: Fleet, lastPath: string): Promise<{ seconds: number; sent: SentPerChange }> {
  const last = fleet.n - 1;
  const t0 = performance.now();
  const envoy = await startRealEnvoy(fleet, NEW_ENVOY_ADDRESS, 'envoy-new');
  const envoys = fleet.real.length + fleet.light.length + 1;
  try {
    await until(
      'the new Envoy: the last route',
      fleet.limitMs,
      () => answers(fleet, NEW_ENVOY_ADDRESS, last, lastPath, 200),
      fleet.cli.alive,
    );
    const seconds = (performance.now() - t0) / 1000;
    const joined = (await xdsDelivered(fleet.adminPort, envoys, fleet.limitMs)).find(
      (e) => e.node === 'envoy-new',
    );
    return { seconds, sent: joined?.sent ?? { resources: Number.NaN, bytes: Number.NaN } };
  } finally {
    await envoy.stop();
  }
}

/**
 * Full GCs, each followed by a moment for V8 to free dead Buffers and hand pages back, until the
 * main thread's heap + external stop falling. One or two are not enough: the buffers a gRPC
 * stream wrote (a whole push, 5.6 MB per stream at 10,000 routes) hang off objects that are let
 * go one GC after another (plain node:http2, 20 streams sent 5 MiB each: `external` 128 MiB after
 * one GC, 2 MiB after two; `serve --xds` with 19 ADS streams at 10,000 routes: 134 MiB after two,
 * 14 MiB after four more).
 */
async function liveAfterGc(url: string): Promise<LiveMemory> {
  let live: LiveMemory | undefined;
  for (let i = 0; i < MAX_GCS; i++) {
    await collectGarbage(url);
    // The compiler thread too: its first compile's garbage would otherwise be in the 1-Envoy RSS
    // and gone (V8's memory reducer) by the later readings, flattering their ratio.
    if ((await collectWorkersGarbage(url)) === 0) throw new Error('serve: no worker thread to collect');
    await sleep(GC_SETTLE_MS);
    const now = await memoryUsage(url);
    const falling = live === undefined || now.heapUsed + now.external < live.heapUsed + live.external - MIB;
    live = now;
    if (!falling) break;
  }
  return live as LiveMemory;
}

/** The control plane's memory at one point, in MiB: RSS and the main thread's live heap + external after full GCs, and the peak RSS since the last reset. */
async function restingMiB(fleet: Fleet): Promise<MemoryPoint> {
  const pid = fleet.cli.child.pid;
  const peak = memoryMiB(pid, 'VmHWM');
  const url = inspectorUrl(fleet.cli.output());
  if (url === undefined) throw new Error('serve printed no inspector URL');
  const live = await liveAfterGc(url);
  const [heap, external] = [live.heapUsed / MIB, live.external / MIB];
  return { rss: memoryMiB(pid, 'VmRSS'), live: heap + external, heap, external, peak };
}

/**
 * The changes timed with their parts' CPU and steadfast's GC read (and, asked for, its service
 * thread profiled over them: the profile written and summed per change).
 */
async function watchedChanges(fleet: Fleet, options: FleetOptions): Promise<Record<ChangeKind, Measured[]>> {
  const inspector = inspectorUrl(fleet.cli.output());
  if (inspector === undefined) throw new Error('serve printed no inspector URL');
  const parts = await fleetParts(
    inspector,
    fleet.real.map((r) => r.envoy.child.pid),
  );
  const file = options.profileChanges;
  const profiling = file === undefined ? undefined : await startProfile(inspector);
  const changes = await timeChanges(fleet, options.changes, { parts, inspector, oldSpace: {} });
  if (profiling && file !== undefined) {
    const profile = await profiling.stop();
    writeProfile(`${file}-${fleet.n}.cpuprofile`, profile);
    const all = KINDS.flatMap((k) => changes[k]);
    const offset = monotonicToEpochMs();
    const windows = all.flatMap((m) => (m.window ? [m.window] : []));
    process.stdout.write(`\n${profileSummary(profile, windows, offset)}\n`);
    // The snapshot step alone: from the compiler's answer back on the service thread to the snapshot built.
    const snapshots = all.flatMap(({ window, stages }) => {
      const [from, to] = [stages?.service.received, stages?.service.built];
      return window && from !== undefined && to !== undefined
        ? [[window[0] + from, window[0] + to] as const]
        : [];
    });
    process.stdout.write(
      `\nthe snapshot step (answer received → built): ${profileSummary(profile, snapshots, offset, 12)}\n`,
    );
  }
  return changes;
}

/** The steps after start-up, in order; the row's figures. */
async function measureSteps(
  fleet: Fleet,
  backendPort: number,
  options: FleetOptions,
  start: { ready: number; firstServed: number; readyPeak: number; status?: number },
): Promise<FleetRow> {
  const pid = fleet.cli.child.pid;
  await xdsDelivered(fleet.adminPort, 1, fleet.limitMs);
  const one = await restingMiB(fleet);
  resetPeak(pid);
  const { two, all } = await connectTheRest(fleet, options.lightClients);
  resetPeak(pid);
  const changes = await watchedChanges(fleet, options);
  const changesPeakMiB = memoryMiB(pid, 'VmHWM');
  // What the changes' clock no longer holds: kubectl around the same kind of request.
  const kubectl = fleet.kube ? await kubectlCost(fleet.kube, fleet.n - 1, KUBECTL_ROUNDS) : undefined;
  const endpointSent = await endpointChanges(fleet, backendPort);
  const joined = await newEnvoy(fleet, `/edited-${options.changes - 1}/${fleet.n - 1}`);
  const by = <T>(f: (m: Measured[]) => T): Record<ChangeKind, T> =>
    Object.fromEntries(KINDS.map((k) => [k, f(changes[k])])) as Record<ChangeKind, T>;
  return {
    provider: fleet.provider,
    routes: fleet.n,
    realEnvoys: fleet.real.length,
    lightClients: fleet.light.length,
    readySeconds: start.ready,
    firstServedSeconds: start.firstServed,
    readyPeakMiB: start.readyPeak,
    ...(start.status !== undefined ? { statusSeconds: start.status } : {}),
    memory: { oneEnvoy: one, twoEnvoys: two, allEnvoys: all },
    changesPeakMiB,
    envoyPeakMiB: memoryMiB(envoyPid(fleet.real[0]?.envoy.child.pid ?? -1), 'VmHWM'),
    changes: by((m) => times(m.map((x) => x.seconds))),
    stages: by((m) => stageMedians(m.flatMap((x) => (x.stages ? [x.stages] : [])))),
    slowest: by((m) => slowestChanges(m)),
    cpu: by((m) => cpuMedians(m)),
    settle: await providerSettle(fleet.provider, fleet.kube?.steadfastConfig),
    ...(fleet.kube ? { requests: by((m) => times(m.map((x) => x.madeSeconds))) } : {}),
    ...(kubectl ? { kubectl: { kubectl: times(kubectl.kubectl), request: times(kubectl.request) } } : {}),
    sent: by((m) => medianSent(m.flatMap((x) => x.real))),
    lightSent: by((m) => medianSent(m.flatMap((x) => x.light))),
    ...(endpointSent ? { endpointSent } : {}),
    newEnvoySeconds: joined.seconds,
    newEnvoySent: joined.sent,
  };
}

export async function measureFleet(
  n: number,
  backendPort: number,
  provider: Provider,
  options: FleetOptions,
): Promise<FleetRow> {
  const fleet = await startControlPlane(n, backendPort, provider, options.serveNodeArgs);
  try {
    const { ready, firstServed } = await startServing(fleet);
    const readyPeak = memoryMiB(fleet.cli.child.pid, 'VmHWM');
    // Kubernetes: the status of every route is written once, after the first generation; the
    // rest is measured after it, as a team's edit usually comes long after the start.
    const kube = fleet.kube;
    const status = kube
      ? await until('status of the last route', fleet.limitMs, async () => statusWritten(kube, n - 1))
      : undefined;
    return await measureSteps(fleet, backendPort, options, { ready, firstServed, readyPeak, status });
  } catch (e) {
    process.stderr.write(`${fleet.cli.output().slice(-2000)}\n`);
    throw e;
  } finally {
    await stopFleet(fleet);
  }
}

/** Every size in turn, from one provider: the rows, printed as they come. */
export async function runFleet(
  sizes: readonly number[],
  backendPort: number,
  provider: Provider,
  options: FleetOptions,
): Promise<FleetRow[]> {
  const rows: FleetRow[] = [];
  for (const n of sizes) {
    process.stdout.write(
      `bench:scale --fleet: ${provider}, ${n} routes, 2 Envoys + ${options.lightClients} clients … `,
    );
    const row = await measureFleet(n, backendPort, provider, options);
    rows.push(row);
    const c = row.changes;
    process.stdout.write(
      `one route on both Envoys: added ${c.add.p95.toFixed(2)} s, edited ${c.edit.p95.toFixed(2)} s, ` +
        `deleted ${c.delete.p95.toFixed(2)} s (p95); ${Math.round(row.sent.edit.bytes)} B of resource per Envoy per edit\n`,
    );
    for (const [kind, slow] of Object.entries(row.slowest ?? {}))
      for (const one of slow) process.stdout.write(`  slowest ${slowChangeLine(kind, one)}\n`);
  }
  return rows;
}
