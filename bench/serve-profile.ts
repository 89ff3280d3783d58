// `node dist/bench/serve-profile.js [V5|V6] [seconds]`: where an ext_proc stream's time goes
// in `steadfast serve`. Runs one attach-mode variant as the benchmark does (Envoy and the
// control service pinned to CPU 0, wrk on CPU 1), with `node --cpu-prof` on the control
// service, and sums the profile's samples: by the code that spent them (self time) and by
// the package that asked for them (the nearest caller outside node's own modules). The
// profile stays in bench/tmp/serve-profile/ for Chrome DevTools or speedscope.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { startBackendProcess } from './backend-process.js';
import { planCpuPinning } from './cpu-pinning.js';
import { BENCH_PATH, startVariant } from './running-variant.js';
import { benchVariants } from './variants.js';
import { runWrk } from './wrk.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Which part of the stack a frame belongs to. */
export function categoryOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'node/V8 native (no JS frame)';
    if (functionName === '(root)') return 'root';
    return 'node/V8 builtins';
  }
  if (url.includes('/@grpc/grpc-js/')) return 'grpc-js';
  if (url.includes('/@grpc/reflection/')) return 'grpc reflection';
  if (url.includes('/@grpc/proto-loader/')) return 'proto-loader';
  if (url.includes('/protobufjs/') || url.includes('/@protobufjs/')) return 'protobufjs';
  if (url.includes('/prom-client/')) return 'prom-client';
  if (url.includes('/node_modules/'))
    return `other packages (${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]})`;
  if (url.includes('/extproc/src/resolve/')) return 'steadfast resolver';
  if (url.includes('/extproc/src/grpc/')) return 'steadfast ext_proc adapter';
  if (url.includes('/extproc/src/')) return 'steadfast other';
  if (url.startsWith('node:internal/http2')) return 'node http2';
  if (url.startsWith('node:')) return 'node other (streams, events, timers, net)';
  return 'other';
}

const OWNERS = new Set([
  'grpc-js',
  'protobufjs',
  'prom-client',
  'steadfast resolver',
  'steadfast ext_proc adapter',
  'steadfast other',
  'grpc reflection',
  'proto-loader',
]);

export interface ProfileSummary {
  readonly busyMs: number;
  readonly self: ReadonlyArray<readonly [string, number]>;
  readonly owner: ReadonlyArray<readonly [string, number]>;
  readonly top: ReadonlyArray<readonly [string, number]>;
}

/**
 * Sums a profile's samples (idle excluded) by category, by owning package and by function,
 * from the first sample in steadfast's ext_proc handler on: start-up is not the subject.
 */
export function summarize(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownerOf = new Map<number, string>();
  const owner = (id: number): string => {
    const known = ownerOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id) as ProfileNode;
    const cat = categoryOf(node.callFrame);
    const p = parent.get(id);
    const o = OWNERS.has(cat) || p === undefined ? cat : owner(p);
    ownerOf.set(id, o);
    return o;
  };
  const self = new Map<string, number>();
  const owners = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  const inHandler = (id: number | undefined): boolean => {
    for (let n = id; n !== undefined; n = parent.get(n)) {
      if ((byId.get(n) as ProfileNode).callFrame.url.includes('/extproc/src/grpc/ext-proc-service'))
        return true;
    }
    return false;
  };
  const first = profile.samples.findIndex((id) => inHandler(id));
  profile.samples.forEach((id, i) => {
    if (first === -1 || i < first) return;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    busy += us;
    const cat = categoryOf(node.callFrame);
    self.set(cat, (self.get(cat) ?? 0) + us);
    const o = owner(id);
    owners.set(o, (owners.get(o) ?? 0) + us);
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { busyMs: busy / 1000, self: sorted(self), owner: sorted(owners), top: sorted(fns).slice(0, 25) };
}

async function main(): Promise<void> {
  const root = projectRoot();
  const id = process.argv[2] ?? 'V6';
  const seconds = Number(process.argv[3] ?? '10');
  const dir = join(root, 'bench', 'tmp', 'serve-profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pinning = planCpuPinning(-10);
  const variant = benchVariants({ root, sessionKey: randomBytes(32).toString('base64') }).find(
    (v) => v.id === id,
  );
  if (!variant?.serveArgs) throw new Error(`${id} is not a variant with \`steadfast serve\` (V5 or V6)`);
  const addresses = ['127.0.0.2', '127.0.0.3'];
  const backend = await startBackendProcess(root, 'minimal', addresses, pinning.driver);
  try {
    const running = await startVariant(variant, {
      root,
      wasmPath: join(root, 'filter', 'build', 'steadfast.wasm'),
      nativePath: join(root, 'filter', 'build', 'libsteadfast.so'),
      backendAddresses: addresses,
      backendPort: backend.port,
      backendPid: backend.pid,
      pinning,
      serveNodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
    });
    let requests = 0;
    try {
      const url = `http://${running.host}:${running.port}${BENCH_PATH}`;
      const wrk = { url, connections: 32, headers: running.headers, pin: pinning.driver };
      await runWrk({ ...wrk, durationS: 1 });
      const r = await runWrk({ ...wrk, durationS: seconds });
      requests = r.requests;
      console.log(`${id}: ${Math.round(r.rps)} requests/s for ${seconds} s (${r.requests} requests)`);
    } finally {
      await running.stop();
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`steadfast serve wrote no profile into ${dir}`);
    const s = summarize(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
    // From the first ext_proc answer on: the warm-up's requests count too, a tenth of the run's.
    const perReq = (ms: number): string => ((ms * 1000) / requests).toFixed(1);
    const table = (title: string, rows: ReadonlyArray<readonly [string, number]>): void => {
      console.log(`\n| ${title} | ms | share | µs/request |\n|---|---:|---:|---:|`);
      for (const [k, us] of rows) {
        const ms = us / 1000;
        console.log(`| ${k} | ${ms.toFixed(0)} | ${((ms / s.busyMs) * 100).toFixed(1)}% | ${perReq(ms)} |`);
      }
    };
    console.log(
      `\nbusy (not idle) ${s.busyMs.toFixed(0)} ms: ${perReq(s.busyMs)} µs per request; profile ${join(dir, file)}`,
    );
    table('self time by code', s.self);
    table('by the package that asked (nearest caller outside node)', s.owner);
    table('top functions, self time', s.top);
  } finally {
    await backend.stop();
  }
}

if (process.argv[1]?.endsWith('serve-profile.js')) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`serve-profile: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
