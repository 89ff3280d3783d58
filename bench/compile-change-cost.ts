// `node dist/bench/compile-change-cost.js [routes] [rounds]`: the compiler thread's work per
// one-route change, in process, without a service or an Envoy. Compiles bench:scale's files
// (all routes in one file), then repeats bench:scale's changes from files — a route added in a
// file of its own, the last route's path edited by writing its file whole, the added file
// removed — and prints, per kind, the CPU milliseconds of compiling and writing the thread's
// message (median and range), and what each change made anew: documents parsed, objects
// decoded, rules translated, routes and statuses crossing to the service as text. One changed
// route should cross once: a route crossing again one change later is made anew by mistake.
// Run it under `node --cpu-prof` to see where the time goes.
import { IncrementalCompiler } from '../extproc/src/pipeline/incremental-compiler.js';
import {
  CompiledReader,
  CompiledWriter,
  packedCompiledData,
} from '../extproc/src/pipeline/snapshot-compiler.js';
import type { ProvidedConfig } from '../extproc/src/provider/provider.js';
import { baseYaml, routesYaml } from './scale-config.js';
import { scaleRouteYaml } from './scale-routes.js';

type Kind = 'add' | 'edit' | 'delete';

interface Step {
  readonly kind: Kind;
  readonly ms: number;
  readonly parsed: number;
  readonly decoded: number;
  readonly translated: number;
  /** Routes not kept whole by translation (translate/kept-routes.ts). */
  readonly walked: number;
  readonly routesSent: number;
  readonly statusesSent: number;
}

/** Items of a packed list that cross as text (the rest are positions in the list held). */
const texts = (items: Int32Array): number => items.filter((x) => x < 0).length;

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Compiles and writes what the thread sends; the service side reads it, so `held` follows. */
class ThreadRun {
  private readonly compiler = new IncrementalCompiler();
  private readonly writer = new CompiledWriter();
  private readonly reader = new CompiledReader();
  private id = 0;

  step(kind: Kind, provided: ProvidedConfig): Step {
    const t0 = cpuMs();
    const snapshot = this.compiler.compile(provided);
    const { packed } = packedCompiledData(snapshot, this.writer, ++this.id, this.reader.held);
    const ms = cpuMs() - t0;
    this.reader.table.read(packed.table);
    this.reader.statuses.read(packed.statuses, packed.table.id, (text) => ({ text }));
    return {
      kind,
      ms,
      parsed: this.compiler.work.parsed,
      decoded: this.compiler.work.decoded,
      translated: this.compiler.translatedRules,
      walked: snapshot.statuses.filter((st) => st.kind === 'HTTPRoute').length - this.compiler.keptRoutes,
      routesSent: texts(packed.table.routes.items),
      statusesSent: texts(packed.statuses.items),
    };
  }
}

function main(): void {
  const n = Number(process.argv[2] ?? 10_000);
  const rounds = Number(process.argv[3] ?? 10);
  const base = { path: 'base.yaml', text: baseYaml(10_000, 9_000) };
  const routes = (edited?: { i: number; path: string }) => ({
    path: 'routes-0.yaml',
    text: routesYaml(0, n, edited),
  });
  const added = { path: 'added.yaml', text: scaleRouteYaml(n) };
  const input = (...documents: ProvidedConfig['documents']): ProvidedConfig => ({
    documents,
    objects: [],
    diagnostics: [],
  });
  const run = new ThreadRun();
  let current = routes();
  const first = run.step('add', input(base, current));
  console.log(`first compile of ${n} routes: ${first.ms.toFixed(0)} ms CPU`);
  const steps: Step[] = [];
  for (let k = 0; k < rounds; k++) {
    steps.push(run.step('add', input(added, base, current)));
    current = routes({ i: n - 1, path: `/edited-${k}/${n - 1}` });
    steps.push(run.step('edit', input(added, base, current)));
    steps.push(run.step('delete', input(base, current)));
  }
  for (const kind of ['add', 'edit', 'delete'] as const) {
    const of = steps.filter((s) => s.kind === kind);
    // The first round's steps warm the memos up: left out of the figures.
    const ms = of
      .slice(1)
      .map((s) => s.ms)
      .sort((a, b) => a - b);
    const median = ms[Math.floor(ms.length / 2)] ?? NaN;
    const work = (f: (s: Step) => number) => [...new Set(of.slice(1).map(f))].join('/');
    console.log(
      `${kind.padEnd(6)} ${median.toFixed(1)} ms (${(ms[0] ?? NaN).toFixed(1)}-${(ms[ms.length - 1] ?? NaN).toFixed(1)}); ` +
        `parsed ${work((s) => s.parsed)}, decoded ${work((s) => s.decoded)}, rules translated ${work((s) => s.translated)}, ` +
        `routes walked ${work((s) => s.walked)}, ` +
        `routes sent ${work((s) => s.routesSent)}, statuses sent ${work((s) => s.statusesSent)}`,
    );
  }
}

main();
