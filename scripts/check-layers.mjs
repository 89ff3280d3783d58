#!/usr/bin/env node
// Fails on an import cycle between files, and on an import that goes against the layers
// docs/architecture.md describes. Reads the relative imports of extproc/src/** and
// filter/assembly/** (type-only imports count: they are a dependency of the design, even
// when the compiler erases them). Run by `npm run lint`; `--graph` prints the folder graph.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The project root; a test points it at a copy of the tree with a planted problem.
const ROOT = process.env.CHECK_LAYERS_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Each tree: its layers (a folder, or a file at the top of the tree) and what each may
 * import besides itself. A layer not listed may import nothing but itself.
 */
const TREES = [
  {
    root: 'extproc/src',
    layers: {
      // Shared definitions every stage may use.
      'json.ts': [],
      // Where steadfast's own .proto files are: the gRPC services and the xDS encoder read them.
      'proto-dir.ts': [],
      // The data stages pass on, and the pure stages in the order data flows through them.
      // The policy module's types and gRPC retry reasons (policy/policy.ts): the Gateway API
      // decoder checks reasons against them, so they sit below both it and the rest of policy/.
      'policy/policy.ts': [],
      // The route filters' plain data (policy/route-filters.ts): one spelling for the decoded
      // model and the table, so it too sits below both.
      'policy/route-filters.ts': [],
      gatewayapi: ['json.ts', 'policy/policy.ts', 'policy/route-filters.ts'],
      policy: ['json.ts', 'policy/policy.ts', 'policy/route-filters.ts'],
      // The RE2 decision: translation reports what RE2 would refuse, the IR leaves it out.
      'policy/re2-syntax.ts': ['json.ts', 'policy'],
      translate: ['json.ts', 'gatewayapi', 'policy', 'policy/re2-syntax.ts'],
      // The IR: the table in Envoy's shape with every decision taken (precedence, virtual hosts,
      // router plans, route actions, shared clusters); the consumers below only read it.
      ir: ['json.ts', 'policy'],
      // Where the IR is built, and what it keeps between builds: only the pipeline (and the
      // ext_proc workers' wiring) may build it; envoy/ and resolve/ are handed it.
      'ir/ir-memo.ts': ['json.ts', 'policy', 'ir'],
      'ir/build-ir.ts': ['json.ts', 'policy', 'policy/re2-syntax.ts', 'ir', 'ir/ir-memo.ts'],
      resolve: ['json.ts', 'policy', 'ir'],
      envoy: ['json.ts', 'policy', 'ir'],
      // The seam: what a source of Gateway API objects (Provider) and of session keys
      // (KeySource) offers. Only cli/ picks a concrete one: the stages below see the interfaces.
      provider: ['json.ts', 'gatewayapi', 'translate'],
      // The concrete sources: files, key files, a Kubernetes API server.
      'provider/config-files.ts': ['json.ts', 'gatewayapi'],
      'provider/file.ts': ['json.ts', 'gatewayapi', 'provider', 'provider/config-files.ts'],
      'provider/key-files.ts': ['json.ts', 'provider'],
      'provider/kubernetes': ['json.ts', 'gatewayapi', 'translate', 'provider', 'provider/key-files.ts'],
      // Runs the stages: one compiler for every command, and the atomic swap of what it produced.
      pipeline: [
        'json.ts',
        'gatewayapi',
        'policy',
        'translate',
        'ir',
        'ir/ir-memo.ts',
        'ir/build-ir.ts',
        'resolve',
        'provider',
      ],
      // Servers for what the pipeline produced: ext_proc and health over gRPC, the admin API
      // (fastify), and the wiring of the two with their workers and metrics.
      'server/grpc': ['json.ts', 'proto-dir.ts', 'policy', 'ir', 'resolve'],
      'server/admin': ['json.ts', 'gatewayapi', 'policy', 'ir', 'resolve', 'translate'],
      server: [
        'json.ts',
        'gatewayapi',
        'policy',
        'ir',
        'ir/build-ir.ts',
        'resolve',
        'translate',
        'provider',
        'pipeline',
        'server/grpc',
        'server/admin',
      ],
      // Delivers gateway mode's Envoy resources: files one local Envoy watches, or ADS to a fleet.
      xds: ['json.ts', 'proto-dir.ts', 'policy', 'ir', 'envoy', 'pipeline'],
      // The local gateway: one Envoy process this service starts, configures and watches.
      local: ['json.ts', 'policy', 'envoy', 'provider', 'pipeline', 'server', 'xds'],
      cli: [
        'json.ts',
        'gatewayapi',
        'policy',
        'translate',
        'ir',
        'resolve',
        'envoy',
        'provider',
        'provider/config-files.ts',
        'provider/file.ts',
        'provider/key-files.ts',
        'provider/kubernetes',
        'pipeline',
        'server',
        'server/grpc',
        'server/admin',
        'xds',
        'local',
      ],
    },
    /** A layer inside another that whoever may import the enclosing one may import too. */
    within: { 'policy/policy.ts': 'policy', 'policy/route-filters.ts': 'policy' },
    /** Known exceptions, each with the reason it stays for now. Keys: `from -> to` file paths. */
    allowed: {
      // `steadfast quickstart` starts the demo backends in its own process; running them as a
      // child process instead belongs with the CLI's process cleanup (issue 18).
      'cli/commands/quickstart.ts -> ../../backends/attempt-ledger.ts': 'demo backends in-process',
      'cli/commands/quickstart.ts -> ../../backends/echo/start-echo-backend.ts': 'demo backends in-process',
      'cli/commands/quickstart.ts -> ../../backends/grpc/start-grpc-backend.ts': 'demo backends in-process',
      'cli/commands/quickstart.ts -> ../../backends/running-backend.ts': 'demo backends in-process',
    },
  },
  {
    root: 'filter/assembly',
    layers: {
      // The host boundary and plain helpers.
      abi: [],
      crypto: [],
      encoding: [],
      config: [],
      'headers.ts': ['abi'],
      'metrics.ts': ['abi'],
      'properties.ts': ['abi'],
      // Capabilities, each on its own.
      policy: ['abi'],
      retry: ['abi', 'headers.ts', 'policy'],
      session: ['abi', 'crypto', 'encoding', 'headers.ts', 'metrics.ts', 'policy', 'properties.ts'],
      testing: ['abi', 'crypto', 'encoding', 'session', 'steadfast.ts'],
      // Attach mode's answer cache: keys from request headers, answers from metadata.
      answers: ['abi', 'headers.ts', 'properties.ts'],
      // The filter: wires the capabilities into proxy-wasm's callbacks.
      'steadfast.ts': ['*'],
      'index.ts': ['*'],
    },
    allowed: {},
  },
];

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

function sourceFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The relative imports of a file, as paths relative to the tree's root. */
function importsOf(file, rootAbs) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec?.startsWith('.')) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    out.push(
      relative(rootAbs, target.endsWith('.ts') ? target : `${target}.ts`)
        .split('\\')
        .join('/'),
    );
  }
  return out;
}

/** A file's layer: the longest declared layer that holds it (`server/grpc` before `server`), else its top folder. */
const layerOf = (path, layers) => {
  let best;
  for (const name of Object.keys(layers)) {
    if ((path === name || path.startsWith(`${name}/`)) && (best === undefined || name.length > best.length))
      best = name;
  }
  return best ?? (path.includes('/') ? path.slice(0, path.indexOf('/')) : path);
};

/** Strongly connected components with more than one file (Tarjan), i.e. import cycles. */
function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

const problems = [];
const printGraph = process.argv.includes('--graph');
for (const tree of TREES) {
  const rootAbs = join(ROOT, tree.root);
  const graph = new Map();
  for (const file of sourceFiles(rootAbs)) {
    graph.set(relative(rootAbs, file).split('\\').join('/'), importsOf(file, rootAbs));
  }
  const folderEdges = new Map();
  const usedAllowances = new Set();
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from, tree.layers);
    const rules = tree.layers[fromLayer];
    for (const to of targets) {
      if (to.startsWith('..')) {
        const edge = `${from} -> ${to}`;
        if (tree.allowed[edge] !== undefined) usedAllowances.add(edge);
        else problems.push(`${tree.root}/${from} imports ${to}, outside ${tree.root}`);
        continue;
      }
      if (!graph.has(to)) {
        problems.push(`${tree.root}/${from} imports ${to}, which does not exist`);
        continue;
      }
      const toLayer = layerOf(to, tree.layers);
      if (toLayer === fromLayer) continue;
      const key = `${fromLayer} -> ${toLayer}`;
      folderEdges.set(key, (folderEdges.get(key) ?? 0) + 1);
      if (rules === undefined) {
        problems.push(
          `${tree.root}/${from}: ${fromLayer} is not a declared layer (scripts/check-layers.mjs)`,
        );
        continue;
      }
      if (rules.includes('*') || rules.includes(toLayer)) continue;
      if (tree.within?.[toLayer] !== undefined && rules.includes(tree.within[toLayer])) continue;
      const edge = `${from} -> ${to}`;
      if (tree.allowed[edge] !== undefined) {
        usedAllowances.add(edge);
        continue;
      }
      problems.push(`${tree.root}/${from} imports ${to}: ${fromLayer} may not import ${toLayer}`);
    }
  }
  for (const edge of Object.keys(tree.allowed)) {
    if (!usedAllowances.has(edge))
      problems.push(`${tree.root}: allowance "${edge}" is no longer needed: remove it`);
  }
  for (const scc of cycles(graph)) problems.push(`${tree.root}: import cycle between ${scc.join(', ')}`);
  if (printGraph) {
    console.log(`${tree.root}:`);
    for (const [edge, n] of [...folderEdges].sort()) console.log(`  ${edge} (${n})`);
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(`check-layers: ${p}`);
  process.exit(1);
}
console.log('check-layers: no import cycles, every import follows the layers');
