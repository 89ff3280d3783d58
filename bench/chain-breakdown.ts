// `node dist/bench/chain-breakdown.js [reps]`: where gateway mode's CPU per request goes.
// Starts from the generated V3 configuration and takes it apart — the listener and
// cluster alone, then the downstream wasm filter, the upstream one, stateful_session,
// the no-policy token, retry only, session only, both, and a new session per request —
// measuring Envoy's CPU per request under wrk for each, interleaved, `reps` times
// (default 3). The least disturbed repetition (the minimum) is the figure to compare.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { startBackendProcess } from './backend-process.js';
import { planCpuPinning } from './cpu-pinning.js';
import { CpuMeter } from './process-cpu.js';
import { median } from './round-stats.js';
import { BENCH_PATH, startVariant, stopEverything } from './running-variant.js';
import { benchVariants, type Variant } from './variants.js';
import { runWrk, wrkVersion } from './wrk.js';

type Node = Record<string, unknown>;

const ROUTER = {
  name: 'envoy.filters.http.router',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
};

function hcm(doc: Node): Node {
  const listener = ((doc['static_resources'] as Node)['listeners'] as Node[])[0] as Node;
  return ((((listener['filter_chains'] as Node[])[0] as Node)['filters'] as Node[])[0] as Node)[
    'typed_config'
  ] as Node;
}

function route(doc: Node): Node {
  const vhost = ((hcm(doc)['route_config'] as Node)['virtual_hosts'] as Node[])[0] as Node;
  return (vhost['routes'] as Node[])[0] as Node;
}

/** The V3 configuration with `change` applied. */
function edited(v3: string, change: (doc: Node) => void): string {
  const doc = parse(v3) as Node;
  change(doc);
  return stringify(doc);
}

function setToken(token: string | null): (doc: Node) => void {
  return (doc) => {
    const r = route(doc);
    if (token === null) delete r['metadata'];
    else r['metadata'] = { filter_metadata: { steadfast: { policy: token } } };
  };
}

/** Keeps the named HTTP filters (by index in the generated chain: 0 wasm, 1 stateful_session). */
function chain(keepWasm: boolean, keepSession: boolean, keepUpstream: boolean): (doc: Node) => void {
  return (doc) => {
    const h = hcm(doc);
    const filters = h['http_filters'] as Node[];
    const router = keepUpstream ? (filters[filters.length - 1] as Node) : ROUTER;
    h['http_filters'] = [
      ...(keepWasm ? [filters[0] as Node] : []),
      ...(keepSession ? [filters[1] as Node] : []),
      router,
    ];
  };
}

async function main(): Promise<void> {
  wrkVersion();
  const reps = Math.min(10, Math.max(1, Number(process.argv[2] ?? 3) || 3));
  const root = projectRoot();
  const pinning = planCpuPinning(-10);
  const variants = benchVariants({ root, sessionKey: randomBytes(32).toString('base64') });
  const v1 = variants.find((v) => v.id === 'V1') as Variant;
  const rule = 'sf1;id=httproute/default/bench/rule/0;k=h';
  const retry = ';ra=2;rc=500,502,503;rb=10;tr=5000;tb=1000';
  const session = ';st=c;sn=bench-session;sp=/;sl=p;sa=3600';
  // The same chain with each build of the filter: V3's configuration, and V3n's.
  const chainCases = (
    build: string,
    config: string,
  ): Array<{ name: string; config: string; cookie: boolean }> => [
    {
      name: `+ downstream ${build}, no token`,
      config: edited(config, (d) => (chain(true, false, false)(d), setToken(null)(d))),
      cookie: false,
    },
    {
      name: `+ upstream ${build}, no token`,
      config: edited(config, (d) => (chain(true, false, true)(d), setToken(null)(d))),
      cookie: false,
    },
    { name: `${build}: + stateful_session, no token`, config: edited(config, setToken(null)), cookie: false },
    { name: `${build}: full chain, no-policy token`, config: edited(config, setToken(rule)), cookie: false },
    {
      name: `${build}: full chain, retry only`,
      config: edited(config, setToken(rule + retry)),
      cookie: false,
    },
    {
      name: `${build}: full chain, session only, resumed`,
      config: edited(config, setToken(rule + session)),
      cookie: true,
    },
    { name: `${build}: full chain, retry + session, resumed`, config, cookie: true },
    { name: `${build}: full chain, retry + session, new session each`, config, cookie: false },
  ];
  const v3Config = (variants.find((v) => v.id === 'V3') as Variant).envoyConfig as string;
  const v3nConfig = (variants.find((v) => v.id === 'V3n') as Variant).envoyConfig as string;
  const cases: Array<{ name: string; config: string; cookie: boolean }> = [
    { name: 'plain Envoy (V1)', config: v1.envoyConfig as string, cookie: false },
    {
      name: 'generated listener + cluster, router only',
      config: edited(v3Config, (d) => (chain(false, false, false)(d), setToken(null)(d))),
      cookie: false,
    },
    ...chainCases('wasm', v3Config),
    ...chainCases('native', v3nConfig),
  ];
  const addresses = ['127.0.0.2', '127.0.0.3'];
  const backend = await startBackendProcess(root, 'minimal', addresses, pinning.driver);
  const results = new Map<string, number[]>();
  try {
    const env = {
      root,
      wasmPath: join(root, 'filter', 'build', 'steadfast.wasm'),
      nativePath: join(root, 'filter', 'build', 'libsteadfast.so'),
      backendAddresses: addresses,
      backendPort: backend.port,
      backendPid: backend.pid,
      pinning,
    };
    for (let rep = 0; rep < reps; rep++) {
      for (const c of cases) {
        const variant: Variant = {
          id: 'V3',
          name: c.name,
          description: c.name,
          envoyConfig: c.config,
          ...(c.cookie ? { sessionCookie: 'bench-session' } : {}),
        };
        const running = await startVariant(variant, env);
        try {
          const url = `http://${running.host}:${running.port}${BENCH_PATH}`;
          const wrk = { url, connections: 32, headers: running.headers, pin: pinning.driver };
          await runWrk({ ...wrk, durationS: 1 });
          const meter = new CpuMeter([running.envoyPid]);
          const r = await runWrk({ ...wrk, durationS: 4 });
          const us = (meter.read()[0] ?? NaN) / r.requests;
          results.set(c.name, [...(results.get(c.name) ?? []), us]);
          console.log(
            `rep ${rep + 1}/${reps}  ${c.name.padEnd(48)} ${us.toFixed(1).padStart(7)} µs/req  ${r.rps.toFixed(0).padStart(6)} req/s`,
          );
        } finally {
          await running.stop();
        }
      }
    }
  } finally {
    await backend.stop();
  }
  console.log('\n| configuration | Envoy CPU µs/req, min | median |\n|---|---:|---:|');
  for (const c of cases) {
    const xs = results.get(c.name) ?? [];
    console.log(`| ${c.name} | ${Math.min(...xs).toFixed(1)} | ${(median(xs) ?? NaN).toFixed(1)} |`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void stopEverything().finally(() => process.exit(130)));

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(`chain breakdown: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
