// The incremental compiler against a full compile: after every step of seeded random edit
// sequences (routes edited, added, removed, renamed and reordered; lines inserted before
// documents; syntax broken and mended; invalid fields; tags; end markers; duplicates;
// Services, endpoints, policies and ReferenceGrants changed, routes to another namespace added;
// files added and removed) both give the same
// table, key material, statuses, diagnostics, errors and warnings, lines included. So does
// the rest of the way to Envoy as the service takes it, kept from one step to the next: the
// table and statuses read back item by item from the compiler thread's data, the resolver compiled with
// a memo (probed with requests for every hostname), the gateway-mode Envoy resources
// generated with a memo, and the route files encoded by a kept encoder, all equal
// what a fresh generation makes from the full compile. And it does reuse: one edited
// document in a file of many is the only one parsed, decoded, translated, generated and
// encoded again; the resolver builds only the buckets of the hostnames it changed.
import { describe, expect, it } from 'vitest';
import {
  IncrementalCompiler,
  StaleObjectsError,
  documentPieces,
} from '../../extproc/src/pipeline/incremental-compiler.js';
import { type Snapshot, compileConfig } from '../../extproc/src/pipeline/snapshot.js';
import {
  CompiledReader,
  CompiledWriter,
  compiledData,
  snapshotFrom,
} from '../../extproc/src/pipeline/snapshot-compiler.js';
import { type ResourceFiles, resourceFiles } from '../../extproc/src/envoy/file-resources.js';
import type { GatewayConfigOptions } from '../../extproc/src/envoy/gateway-config.js';
import { GenerationMemo } from '../../extproc/src/envoy/generation-memo.js';
import { startingFrom } from '../../extproc/src/envoy/reset-default.js';
import { RouteFileEncoder } from '../../extproc/src/xds/route-files.js';
import { type Resolver, compileResolver } from '../../extproc/src/resolve/compile.js';
import type { PolicyTable } from '../../extproc/src/policy/policy-table.js';
import type { ProvidedConfig } from '../../extproc/src/provider/provider.js';
import { parseAllDocuments } from 'yaml';
import { mulberry32 as random } from '../support/mulberry32.js';

function parseAllYaml(text: string): unknown[] {
  return parseAllDocuments(text).map((d) => d.toJS() as unknown);
}

const BASE = [
  `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
`,
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: 8080 }
    - { name: api, protocol: HTTP, port: 8081, hostname: '*.api.example' }
`,
  serviceYaml('app', 80),
  serviceYaml('other', 81),
  sliceYaml('app', ['127.0.0.2', '127.0.0.3']),
  sliceYaml('other', ['127.0.0.4']),
];

function serviceYaml(name: string, port: number, appProtocol?: string): string {
  const proto = appProtocol ? `, appProtocol: ${appProtocol}` : '';
  return `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: default }
spec: { ports: [{ name: http, port: ${port}, targetPort: 9000${proto} }] }
`;
}

function sliceYaml(service: string, addresses: readonly string[]): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${service}-1, namespace: default, labels: { kubernetes.io/service-name: ${service} } }
addressType: IPv4
ports: [{ name: http, port: 9000 }]
endpoints:
${addresses.map((a, i) => `  - addresses: ['${a}']\n    conditions: { ready: ${i % 3 !== 2} }`).join('\n')}
`;
}

function routeYaml(rnd: () => number, name: string): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const grpc = rnd() < 0.15;
  const section = pick(['', ', sectionName: http', ', sectionName: api', ', sectionName: nope']);
  const backends = pick([
    '[{ name: app, port: 80 }]',
    '[{ name: app, port: 80, weight: 3 }, { name: other, port: 81, weight: 0 }]',
    '[{ name: missing, port: 80 }]',
    '[{ name: other, port: 81 }]',
  ]);
  const extras = [
    pick([
      '',
      `      retry: { attempts: ${Math.floor(rnd() * 4)}, codes: [503, 502] }\n`,
      '      retry: { attempts: 2, codes: [700] }\n',
    ]),
    pick([
      '',
      '      timeouts: { request: 5s, backendRequest: 1s }\n',
      '      timeouts: { request: 1s, backendRequest: 2s }\n',
    ]),
    pick([
      '',
      '      sessionPersistence: { sessionName: s-' + name + ', type: Cookie }\n',
      '      sessionPersistence: { type: Header, sessionName: x_bad }\n',
    ]),
  ].join('');
  const time = rnd() < 0.5 ? `, creationTimestamp: '2026-01-0${1 + Math.floor(rnd() * 9)}T00:00:00Z'` : '';
  if (grpc) {
    return `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: ${name}, namespace: default${time} }
spec:
  parentRefs: [{ name: edge${section} }]
  hostnames: ['${name}.api.example']
  rules:
    - matches: [{ method: { service: pkg.${name.replace(/-/g, '')}, method: Get } }]
      backendRefs: ${backends}
${extras}`;
  }
  const path = pick(['/', `/${name}`, `/${name}/deep`, '/bad path', '/(re']);
  const type = pick(['PathPrefix', 'Exact', 'RegularExpression']);
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default${time} }
spec:
  parentRefs: [{ name: edge${section} }]
  hostnames: ['${pick([name + '.example', name + '.api.example', '*.example'])}']
  rules:
    - matches: [{ path: { type: ${type}, value: '${path}' } }]
      backendRefs: ${backends}
${extras}`;
}

function policyYaml(rnd: () => number, route: string, n: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  switch (pick(['route', 'service', 'traffic'])) {
    case 'route':
      return `apiVersion: gateway.networking.k8s.io/v1alpha2
kind: SessionPersistencePolicy
metadata: { name: p-${n} }
spec:
  targetRef: { group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${route}${pick(['', ', sectionName: nope'])} }
  type: ${pick(['Header', 'HTTPCookie'])}
  sessionName: s-${n}
`;
    case 'service':
      return `apiVersion: gateway.networking.k8s.io/v1alpha2
kind: SessionPersistencePolicy
metadata: { name: p-${n} }
spec:
  targetRef: { group: "", kind: Service, name: ${pick(['app', 'other', 'missing'])} }
  absoluteTimeoutSeconds: ${pick([60, 300])}
`;
    default:
      return `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: { name: p-${n} }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${pick(['app', 'other'])} }]
  retryConstraint:
    budget: { percent: ${pick([20, 50])}, interval: 10s }
    minRetryRate: { count: 3, interval: 1s }
`;
  }
}

/** A file as its documents and the text between them (comments, blank lines, markers). */
interface Doc {
  text: string;
  /** What stands before the document's `---` line. */
  before: string;
}

type Files = Map<string, Doc[]>;

function fileText(docs: readonly Doc[]): string {
  return docs.map((d, i) => `${d.before}${i > 0 || d.before !== '' ? '---\n' : ''}${d.text}`).join('');
}

function provided(files: Files): ProvidedConfig {
  return {
    documents: [...files].map(([path, docs]) => ({ path, text: fileText(docs) })),
    objects: [],
    diagnostics: [],
  };
}

/** What a snapshot serves and reports, as data (functions and identities dropped). */
function view(s: Snapshot): unknown {
  const { table, tls, statuses, diagnostics, errors, warnings } = s;
  return JSON.parse(JSON.stringify({ table, tls, statuses, diagnostics, errors, warnings })) as unknown;
}

const ENVOY: GatewayConfigOptions = {
  wasmPath: '/steadfast.wasm',
  sessionKeys: ['a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U='],
};

/** The gateway-mode resources as data, route files encoded as Envoy reads them. */
function envoyView(files: ResourceFiles, encoder: RouteFileEncoder): unknown {
  encoder.begin();
  const routes = [...files.routes].map(([name, rc]) => [
    name,
    Buffer.from(encoder.encode(rc, 'v')).toString('base64'),
  ]);
  encoder.end();
  return {
    clusters: [...files.clusters],
    routes,
    listeners: files.listeners,
    secrets: [...files.secrets],
    warnings: files.warnings,
  };
}

/** What the service has of a snapshot, as data. */
interface Pipelined {
  readonly table: unknown;
  readonly statuses: unknown;
  readonly resolved: unknown;
  readonly envoy: unknown;
}

/** The way from the compiler thread to Envoy's files, kept from one compile to the next as the service keeps it. */
class KeptPipeline {
  private readonly writer = new CompiledWriter();
  readonly reader = new CompiledReader();
  private tables = 0;
  readonly encoder = new RouteFileEncoder();
  // As the service makes it: each virtual host kept as the encoder's encoding, not its JSON.
  readonly memo = new GenerationMemo(ENVOY, (host, configuration) =>
    this.encoder.keepHost(host, configuration),
  );

  run(compiled: Snapshot, version: string): Pipelined {
    const data = compiledData(compiled, this.writer, ++this.tables, this.reader.held);
    const snapshot = snapshotFrom(data, this.reader);
    const files = resourceFiles(snapshot.ir, ENVOY, '/xds', version, snapshot.tls, this.memo);
    return {
      table: snapshot.table,
      statuses: snapshot.statuses,
      resolved: resolutions(snapshot.resolver, snapshot.table),
      envoy: envoyView(files, this.encoder),
    };
  }
}

/**
 * What a fresh generation makes of a snapshot; with `memo`, a memo that kept nothing but the
 * `reset` switches the kept pipeline's last generation started from (envoy/reset-default.ts: a
 * route configuration's switch depends on the one before).
 */
function freshPipeline(s: Snapshot, version: string, memo?: GenerationMemo): Pipelined {
  return {
    table: s.table,
    statuses: JSON.parse(JSON.stringify(s.statuses)) as unknown,
    resolved: resolutions(compileResolver(s.ir), s.table),
    envoy: envoyView(resourceFiles(s.ir, ENVOY, '/xds', version, s.tls, memo), new RouteFileEncoder()),
  };
}

/**
 * What a resolver answers for requests to every hostname the table names (and one it does
 * not), on each of its ports and on an unknown listener, for paths its routes' matches take
 * and miss; and what it says of itself.
 */
function resolutions(resolver: Resolver, table: PolicyTable): unknown {
  const hosts = new Set(['unknown.example']);
  const paths = new Set(['/', '/other']);
  for (const r of table.routes) {
    for (const h of r.hostnames) hosts.add(h.replace(/^\*/, 'x'));
    for (const p of [`/${r.name}`, `/${r.name}/deep/x`, `/pkg.${r.name.replace(/-/g, '')}/Get`]) paths.add(p);
  }
  const answers: string[] = [];
  for (const port of [undefined, ...resolver.ports]) {
    const listener = port === undefined ? {} : { listener: { gatewayPort: port } };
    for (const host of hosts) {
      for (const path of paths) {
        const r = resolver.resolve({ method: 'POST', authority: host, path, ...listener });
        answers.push(`${port} ${host}${path}: ${r ? `${r.routeRuleId} ${r.hostname} ${r.token}` : '-'}`);
      }
    }
  }
  return {
    answers,
    size: resolver.size,
    ports: resolver.ports,
    headersRead: [...resolver.headersRead],
    generation: resolver.generation,
    scopes: [...hosts].map((h) => resolver.scope(h)),
  };
}

/** One random edit; returns what it did, for the failure message. */
function edit(files: Files, rnd: () => number, serial: { n: number }): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const routeFiles = [...files.keys()].filter((p) => p !== 'base.yaml' && p !== 'policies.yaml');
  const path = pick(routeFiles);
  const docs = files.get(path) as Doc[];
  const at = Math.floor(rnd() * docs.length);
  const doc = docs[at];
  const newRoute = (): Doc => ({ text: routeYaml(rnd, `route-${serial.n++}`), before: '' });
  const choice = Math.floor(rnd() * 21);
  switch (choice) {
    case 19: {
      // A Service routes name comes and goes: rules that sent to nothing now send to it.
      const base = files.get('base.yaml') as Doc[];
      if (base.length > BASE.length) {
        base.splice(BASE.length);
        return 'Service missing removed';
      }
      base.push(
        { text: serviceYaml('missing', 80), before: '' },
        { text: sliceYaml('missing', ['127.0.0.8']), before: '' },
      );
      return 'Service missing added';
    }
    case 20: {
      // A Gateway's listener: no rule reads it, every route attaches to it anew.
      const base = files.get('base.yaml') as Doc[];
      (base[1] as Doc).text = (BASE[1] as string).replace(
        "port: 8081, hostname: '*.api.example'",
        pick(["port: 8081, hostname: '*.api.example'", "port: 8082, hostname: '*.example'"]),
      );
      return 'Gateway edge changed';
    }
    case 16:
    case 17: {
      // A policy on a route (by name; it may be gone), on one of its rules, or on a Service.
      const names = [...files.values()].flatMap((ds) =>
        ds.flatMap((d) => /kind: HTTPRoute\nmetadata: \{ name: ([a-z0-9-]+)/.exec(d.text)?.[1] ?? []),
      );
      const policies = files.get('policies.yaml') ?? [];
      files.set('policies.yaml', policies);
      if (policies.length > 0 && rnd() < 0.3) {
        policies.splice(Math.floor(rnd() * policies.length), 1);
        return 'a policy removed';
      }
      policies.push({
        text: policyYaml(rnd, pick(names.length > 0 ? names : ['gone']), serial.n++),
        before: '',
      });
      return 'a policy added';
    }
    case 18: {
      const base = files.get('base.yaml') as Doc[];
      (base[3] as Doc).text = serviceYaml('other', pick([81, 83]));
      return 'Service other changed';
    }
    case 0:
    case 1:
      if (!doc) break;
      doc.text = routeYaml(rnd, /name: ([a-z0-9-]+)/.exec(doc.text)?.[1] ?? 'x');
      return `${path}[${at}] rewritten`;
    case 2:
      docs.splice(at, 0, newRoute());
      return `${path}[${at}] route added`;
    case 3:
      if (docs.length === 0) break;
      docs.splice(at, 1);
      return `${path}[${at}] removed`;
    case 4:
      if (!doc) break;
      doc.before += pick(['# a comment\n', '\n', '# two\n# lines\n']);
      return `${path}[${at}] lines inserted before`;
    case 5:
      if (!doc) break;
      doc.text = doc.text.replace('rules:', 'rules: [unclosed\n  x:');
      return `${path}[${at}] syntax broken`;
    case 6:
      if (!doc) break;
      doc.text = doc.text.replace(
        /hostnames: \[[^\]]*\]/,
        `hostnames: [!!str '${pick(['a.example', 'b.example'])}']`,
      );
      return `${path}[${at}] a tag`;
    case 7:
      if (!doc) break;
      doc.text = `${doc.text}...\n`;
      return `${path}[${at}] an end marker`;
    case 8:
      if (!doc) break;
      docs.push({ text: doc.text, before: '' });
      return `${path}[${at}] duplicated`;
    case 9:
      docs.splice(at, 0, { text: '', before: '' }, { text: '# only a comment\n', before: '' });
      return `${path}[${at}] empty documents`;
    case 10: {
      const base = files.get('base.yaml') as Doc[];
      const svc = base[2] as Doc;
      svc.text = serviceYaml('app', pick([80, 82]), pick([undefined, 'kubernetes.io/h2c', 'bogus']));
      return 'Service app changed';
    }
    case 11: {
      const base = files.get('base.yaml') as Doc[];
      (base[4] as Doc).text = sliceYaml(
        'app',
        pick([[], ['127.0.0.2'], ['127.0.0.5', '127.0.0.6', '127.0.0.7']]),
      );
      return 'endpoints of app changed';
    }
    case 12:
      if (routeFiles.length > 1 && rnd() < 0.5) {
        files.delete(path);
        return `${path} deleted`;
      }
      files.set(`routes-${serial.n++}.yaml`, [newRoute(), newRoute()]);
      return 'file added';
    case 13:
      if (docs.length < 2) break;
      docs.reverse();
      return `${path} reordered`;
    case 14:
      if (!doc) break;
      doc.text = doc.text.replace('kind: HTTPRoute', 'kind: Nonsense');
      return `${path}[${at}] unknown kind`;
    default:
      if (!doc) break;
      doc.text = doc.text.replace(/metadata: \{ name: [a-z0-9-]+/, `metadata: { name: route-${serial.n++}`);
      return `${path}[${at}] renamed`;
  }
  docs.push(newRoute());
  return `${path} route appended`;
}

/** A Service in namespace `shared`, which routes in `default` reach only through a ReferenceGrant. */
function remoteServiceYaml(port: number): string {
  return serviceYaml('remote', port).replace('namespace: default', 'namespace: shared');
}

function grantYaml(kind: 'HTTPRoute' | 'GRPCRoute'): string {
  return `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: { name: from-default, namespace: shared }
spec:
  from: [{ group: gateway.networking.k8s.io, kind: ${kind}, namespace: default }]
  to: [{ group: "", kind: Service }]
`;
}

function crossRouteYaml(name: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['${name}.example']
  rules:
    - backendRefs: [{ name: remote, namespace: shared, port: 80 }]
`;
}

/**
 * One random edit of what crosses namespaces (the grant added, removed or made for another
 * kind; the remote Service changed; a route to it added or removed), else one of `edit`'s.
 */
function editAcross(files: Files, rnd: () => number, serial: { n: number }): string {
  // `edit` may have changed or deleted these files too: they come back as needed.
  const shared = files.get('shared.yaml') ?? [];
  const routes = files.get('b.yaml') ?? [];
  files.set('shared.yaml', shared);
  files.set('b.yaml', routes);
  switch (Math.floor(rnd() * 8)) {
    case 0: {
      const grant = shared.findIndex((d) => d.text.includes('ReferenceGrant'));
      if (grant >= 0) shared.splice(grant, 1);
      else shared.push({ text: grantYaml('HTTPRoute'), before: '' });
      return grant >= 0 ? 'grant removed' : 'grant added';
    }
    case 1: {
      const grant = shared.find((d) => d.text.includes('ReferenceGrant'));
      if (!grant) return 'no grant to change';
      grant.text = grantYaml(grant.text.includes('GRPCRoute') ? 'HTTPRoute' : 'GRPCRoute');
      return 'grant kind changed';
    }
    case 2: {
      const service = shared.find((d) => d.text.includes('kind: Service'));
      const text = remoteServiceYaml(rnd() < 0.5 ? 80 : 82);
      if (service) service.text = text;
      else shared.unshift({ text, before: '' });
      return 'remote Service changed';
    }
    case 3:
      routes.push({ text: crossRouteYaml(`cross-${serial.n++}`), before: '' });
      return 'cross-namespace route added';
    default:
      return edit(files, rnd, serial);
  }
}

/**
 * Compiles `files` 60 times, applying `next` between compiles, and holds the incremental
 * compiler and the kept pipeline equal to a full compile and a fresh pipeline at every step.
 */
function equalsFullCompileThroughout(
  files: Files,
  rnd: () => number,
  serial: { n: number },
  next: typeof edit,
): number {
  const compiler = new IncrementalCompiler();
  const kept = new KeptPipeline();
  const steps: string[] = [];
  let keptRoutes = 0;
  for (let step = 0; step < 60; step++) {
    const input = provided(files);
    const incremental = compiler.compile(input);
    keptRoutes += compiler.keptRoutes;
    const full = compileConfig(input);
    expect(view(incremental), steps.join('; ')).toEqual(view(full));
    expect(incremental.fingerprint).toBe(full.fingerprint);
    const fresh = startingFrom(kept.memo, new GenerationMemo(ENVOY));
    const pipelined = kept.run(incremental, String(step));
    expect(pipelined, steps.join('; ')).toEqual(freshPipeline(full, String(step), fresh));
    steps.push(next(files, rnd, serial));
  }
  return keptRoutes;
}

/**
 * One of `edit`'s edits, then every GRPCRoute an HTTPRoute: routes of one kind are what
 * translation keeps routes whole for (translate/kept-routes.ts).
 */
function editOneKind(files: Files, rnd: () => number, serial: { n: number }): string {
  const did = edit(files, rnd, serial);
  for (const docs of files.values()) {
    for (const doc of docs) {
      const name = /kind: GRPCRoute\nmetadata: \{ name: ([a-z0-9-]+)/.exec(doc.text)?.[1];
      if (name === undefined) continue;
      do doc.text = routeYaml(rnd, name);
      while (doc.text.includes('kind: GRPCRoute'));
    }
  }
  return `${did} (as HTTPRoutes only)`;
}

describe('IncrementalCompiler', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`equals a full compile after every step of random edits (seed ${seed})`, () => {
      const rnd = random(seed);
      const serial = { n: 0 };
      const routes = (n: number): Doc[] =>
        Array.from({ length: n }, () => ({ text: routeYaml(rnd, `route-${serial.n++}`), before: '' }));
      const files: Files = new Map([
        ['base.yaml', BASE.map((text) => ({ text, before: '' }))],
        ['a/routes.yaml', routes(12)],
        ['b.yaml', routes(8)],
      ]);
      equalsFullCompileThroughout(files, rnd, serial, edit);
    });
  }

  for (const seed of [11, 12, 13]) {
    it(`equals a full compile with routes of one kind kept whole (seed ${seed})`, () => {
      const rnd = random(seed);
      const serial = { n: 0 };
      const files: Files = new Map([['base.yaml', BASE.map((text) => ({ text, before: '' }))]]);
      files.set(
        'a/routes.yaml',
        [0, 1, 2, 3, 4, 5, 6, 7].map(() => ({ text: '', before: '' })),
      );
      files.set('b.yaml', [{ text: '', before: '' }]);
      editOneKind(files, rnd, serial);
      for (const docs of files.values())
        for (const doc of docs)
          if (doc.text === '')
            do doc.text = routeYaml(rnd, `route-${serial.n++}`);
            while (doc.text.includes('kind: GRPCRoute'));
      // Routes were kept whole in most steps: what is tested is the memo, not the full walk.
      expect(equalsFullCompileThroughout(files, rnd, serial, editOneKind)).toBeGreaterThan(60);
    });
  }

  for (const seed of [5, 6]) {
    it(`equals a full compile with ReferenceGrants and routes across namespaces changing (seed ${seed})`, () => {
      const rnd = random(seed);
      const serial = { n: 0 };
      const files: Files = new Map([
        ['base.yaml', BASE.map((text) => ({ text, before: '' }))],
        ['shared.yaml', [{ text: remoteServiceYaml(80), before: '' }]],
        ['a/routes.yaml', [{ text: routeYaml(rnd, `route-${serial.n++}`), before: '' }]],
        ['b.yaml', [0, 1, 2].map(() => ({ text: crossRouteYaml(`cross-${serial.n++}`), before: '' }))],
      ]);
      equalsFullCompileThroughout(files, rnd, serial, editAcross);
    });
  }

  it('walks every route again once the routes are of one kind after a walk of both', () => {
    // An HTTPRoute that lost its hostname to an older GRPCRoute (kind-conflicts.ts), and another:
    // with the GRPCRoute gone the loser is accepted, though it stands where it stood.
    const route = (kind: string, name: string, day: number) => `apiVersion: gateway.networking.k8s.io/v1
kind: ${kind}
metadata: { name: ${name}, namespace: default, creationTimestamp: '2026-01-0${day}T00:00:00Z' }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['shared.example']
  rules:
    - backendRefs: [{ name: app, port: 80 }]
`;
    // The GRPCRoute in a file of its own: the HTTPRoutes stay the same objects when it comes and goes.
    const files = (grpc: boolean) => {
      const f: Files = new Map([
        ['base.yaml', BASE.map((text) => ({ text, before: '' }))],
        [
          'routes.yaml',
          [route('HTTPRoute', 'r', 2), route('HTTPRoute', 's', 3)].map((text) => ({ text, before: '' })),
        ],
      ]);
      if (grpc) f.set('grpc.yaml', [{ text: route('GRPCRoute', 'g', 1), before: '' }]);
      return provided(f);
    };
    const compiler = new IncrementalCompiler();
    for (const input of [files(false), files(true), files(false)]) {
      expect(view(compiler.compile(input))).toEqual(view(compileConfig(input)));
    }
  });

  it('parses and decodes only the edited document of a large file', () => {
    const rnd = random(9);
    const docs = Array.from({ length: 200 }, (_, i) => routeYaml(rnd, `route-${i}`));
    const input = (texts: readonly string[]): ProvidedConfig => ({
      documents: [
        { path: 'base.yaml', text: BASE.join('---\n') },
        { path: 'routes.yaml', text: texts.join('---\n') },
      ],
      objects: [],
      diagnostics: [],
    });
    const compiler = new IncrementalCompiler();
    const kept = new KeptPipeline();
    const first = compiler.compile(input(docs));
    expect(compiler.work).toEqual({ parsed: BASE.length + 200, decoded: BASE.length + 200 });
    kept.run(first, '1');
    // A route the table holds, on a hostname of its own.
    const name = first.table.routes.find((r) => !r.hostnames.some((h) => h.startsWith('*')))?.name ?? '';
    const at = docs.findIndex((d) => d.includes(`name: ${name},`) || d.includes(`name: ${name} }`));
    expect(at).toBeGreaterThanOrEqual(0);
    const edited = [...docs];
    edited[at] = (edited[at] as string).replace("hostnames: ['", "hostnames: ['edited-");
    const again = compiler.compile(input(edited));
    expect(compiler.work).toEqual({ parsed: 1, decoded: 1 });
    expect(view(again)).toEqual(view(compileConfig(input(edited))));
    // Translated anew: the edited route alone; the others are the same objects as before.
    const renewed = again.table.routes.filter((r) => !first.table.routes.includes(r)).map((r) => r.name);
    expect(renewed).toEqual([name]);
    // Statuses are kept by content: a route's status does not name its hostnames, so every
    // status is the same object as before (and none crosses to the service again).
    expect(again.statuses.filter((st) => !first.statuses.includes(st))).toEqual([]);
    // Generated and encoded anew: the virtual hosts the route left and joined.
    const fresh = startingFrom(kept.memo, new GenerationMemo(ENVOY));
    const pipelined = kept.run(again, '2');
    expect(pipelined).toEqual(freshPipeline(again, '2', fresh));
    expect(kept.memo.madeHosts).toBeGreaterThan(0);
    expect(kept.memo.madeHosts).toBeLessThanOrEqual(2);
    expect(kept.encoder.encodedHosts).toBe(kept.memo.madeHosts);
    // Resolver buckets built anew: the hostname the route left and the one it joined (on the
    // ports that serve them); every other hostname's bucket is kept.
    expect(kept.reader.resolver.builtBuckets).toBe(2);
    // A line added at the top moves every document: only the first, which holds the line, is read again.
    const moved = compiler.compile({
      ...input(edited),
      documents: [
        { path: 'base.yaml', text: BASE.join('---\n') },
        { path: 'routes.yaml', text: `# routes\n${edited.join('---\n')}` },
      ],
    });
    expect(compiler.work).toEqual({ parsed: 1, decoded: 1 });
    expect(moved.statuses.find((s) => s.metadata.name === 'route-150')?.source?.line).toBe(
      (again.statuses.find((s) => s.metadata.name === 'route-150')?.source?.line ?? 0) + 1,
    );
  });

  it('translates only the rules that name a changed Service or its endpoints; a Gateway change, none', () => {
    const rnd = random(13);
    const docs = Array.from({ length: 120 }, (_, i) => routeYaml(rnd, `route-${i}`));
    const input = (base: readonly string[], above = ''): ProvidedConfig => ({
      documents: [
        { path: 'base.yaml', text: base.join('---\n') },
        { path: 'routes.yaml', text: above + docs.join('---\n') },
      ],
      objects: [],
      diagnostics: [],
    });
    const compiler = new IncrementalCompiler();
    compiler.compile(input(BASE));
    expect(compiler.translatedRules).toBe(120);
    const naming = (svc: string): number => docs.filter((d) => d.includes(`name: ${svc}, port`)).length;
    expect(naming('other')).toBeGreaterThan(0);
    expect(naming('app')).toBeGreaterThan(0);
    const check = (base: readonly string[], translated: number, above = ''): void => {
      const snap = compiler.compile(input(base, above));
      expect(view(snap)).toEqual(view(compileConfig(input(base, above))));
      expect(compiler.translatedRules).toBe(translated);
    };
    const otherChanged = [...BASE];
    otherChanged[3] = serviceYaml('other', 83);
    check(otherChanged, naming('other'));
    // Fewer lines: other's slice, below it, moves in its file, and is still the same to a rule.
    const appEndpoints = [...otherChanged];
    appEndpoints[4] = sliceYaml('app', ['127.0.0.9']);
    check(appEndpoints, naming('app'));
    // A Service that routes named while it was missing.
    check([...appEndpoints, serviceYaml('missing', 80)], naming('missing'));
    const gateway = [...appEndpoints, serviceYaml('missing', 80)];
    gateway[1] = (BASE[1] as string).replace('port: 8081', 'port: 8082');
    check(gateway, 0);
    // Every route moved down its file: their rules are the objects they were, but for the first
    // document's, which holds the new lines and is parsed again.
    check(gateway, 1, '# the routes\n\n');
  });

  it("decodes only the objects whose version changed (a cluster's objects), and equals a full compile", () => {
    const rnd = random(11);
    const base = parseAllYaml(BASE.join('---\n'));
    const routes = Array.from({ length: 50 }, (_, i) => parseAllYaml(routeYaml(rnd, `route-${i}`))[0]);
    const input = (rs: readonly unknown[], versions: readonly string[]): ProvidedConfig => ({
      documents: [],
      objects: [
        ...base.map((body, i) => ({ body, version: `base-${i}@1` })),
        ...rs.map((body, i) => ({ body, version: `route-${i}@${versions[i] ?? '1'}` })),
      ],
      diagnostics: [],
    });
    const compiler = new IncrementalCompiler();
    const first = compiler.compile(input(routes, []));
    expect(compiler.work.decoded).toBe(BASE.length + 50);
    const edited = [...routes];
    edited[20] = JSON.parse(JSON.stringify(routes[20]).replace('"hostnames":["', '"hostnames":["edited-'));
    const versions: string[] = [];
    versions[20] = '2';
    const again = compiler.compile(input(edited, versions));
    expect(compiler.work.decoded).toBe(1);
    expect(view(again)).toEqual(view(compileConfig(input(edited, versions))));
    // Translated anew: route-20 alone (when the table holds it); the others are the objects they were.
    const renewed = again.table.routes.filter((r) => !first.table.routes.includes(r)).map((r) => r.name);
    expect(first.table.routes.some((r) => r.name === 'route-20')).toBe(true);
    expect(renewed).toEqual(['route-20']);
    expect(again.table.routes.length).toBeGreaterThan(10);
    // An input sent as its version alone, for a version the compiler does not hold, is refused
    // (the service then sends the whole input), and what the compiler holds stays as it was.
    const stub = input(edited, versions);
    expect(() =>
      compiler.compile({
        ...stub,
        objects: [...stub.objects, { body: undefined, version: 'route-x@9' }],
      }),
    ).toThrow(StaleObjectsError);
    const held = stub.objects.map((o) => ({ body: undefined, version: o.version }));
    expect(view(compiler.compile({ ...stub, objects: held }))).toEqual(view(again));
    expect(compiler.work.decoded).toBe(0);
    // Two inputs claiming one version: neither is kept for the next compile.
    const twice = input(edited, versions);
    compiler.compile({ ...twice, objects: [...twice.objects, { body: edited[3], version: 'route-20@2' }] });
    expect(() =>
      compiler.compile({ ...twice, objects: [{ body: undefined, version: 'route-20@2' }] }),
    ).toThrow(StaleObjectsError);
    // An object without a version is always read anew.
    const unversioned = input(edited, versions);
    compiler.compile({ ...unversioned, objects: unversioned.objects.map(({ body }) => ({ body })) });
    expect(compiler.work.decoded).toBe(BASE.length + 50);
  });

  it('cuts a file before each document start and reads whole what pieces could read differently', () => {
    expect(documentPieces('a: 1\n---\nb: 2\n--- # c\nc: 3\n')).toEqual([
      { text: 'a: 1\n', linesBefore: 0 },
      { text: '---\nb: 2\n', linesBefore: 1 },
      { text: '--- # c\nc: 3\n', linesBefore: 3 },
    ]);
    expect(documentPieces('a: "---"\nb: ---x\n ---\n')).toEqual([
      { text: 'a: "---"\nb: ---x\n ---\n', linesBefore: 0 },
    ]);
    expect(documentPieces('%YAML 1.2\n---\na: 1\n')).toBeUndefined();
    expect(documentPieces('a: 1\n...\n---\nb: 2\n')).toBeUndefined();
    expect(documentPieces('a: 1\rb: 2\n')).toBeUndefined();
    expect(documentPieces('a: 1\r\n---\r\nb: 2\r\n')).toEqual([
      { text: 'a: 1\r\n', linesBefore: 0 },
      { text: '---\r\nb: 2\r\n', linesBefore: 1 },
    ]);
  });
});
