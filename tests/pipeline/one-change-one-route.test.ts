// A change makes anew the routes it changed, and only those, from the compiler thread to the
// service, one change after another: after seeded random sequences of bench:scale's changes
// from files (a route added in a file of its own, a route's path edited by writing its whole
// file, a route put back, the added file deleted, two routes edited at once, a line added
// above every route), the routes the service holds as new objects are exactly those whose
// document changed, and translation walks only those (but where a line moved every route).
// So a route changed by one generation is not made anew by the next.
import { describe, expect, it } from 'vitest';
import { IncrementalCompiler } from '../../extproc/src/pipeline/incremental-compiler.js';
import {
  CompiledReader,
  CompiledWriter,
  compiledData,
  snapshotFrom,
} from '../../extproc/src/pipeline/snapshot-compiler.js';
import type { TableRoute } from '../../extproc/src/policy/policy-table.js';
import type { ProvidedConfig } from '../../extproc/src/provider/provider.js';
import { rng } from '../resolve/random-table.js';

const BASE = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: steadfast }
spec: { controllerName: steadfast.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: 8080 }
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: 9000 }] }
`;

function routeYaml(i: number, path = `/r/${i}`): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: route-${i}, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  hostnames: ['svc-${i}.example']
  rules:
    - matches: [{ path: { type: PathPrefix, value: '${path}' } }]
      backendRefs: [{ name: app, port: 80 }]
`;
}

/** The files: which routes each holds, each route's path, and comment lines above the first. */
class Files {
  readonly files = new Map<string, number[]>([['routes-0.yaml', Array.from({ length: 60 }, (_, i) => i)]]);
  readonly paths = new Map<number, string>();
  comments = 0;

  documents(): Map<string, string> {
    const docs = new Map<string, string>();
    for (const routes of this.files.values())
      for (const i of routes) docs.set(`route-${i}`, routeYaml(i, this.paths.get(i)));
    return docs;
  }

  provided(): ProvidedConfig {
    const files = [...this.files].map(([path, routes]) => ({
      path,
      text:
        (path === 'routes-0.yaml' ? '# routes\n'.repeat(this.comments) : '') +
        routes.map((i) => routeYaml(i, this.paths.get(i))).join('---\n'),
    }));
    return { documents: [{ path: 'base.yaml', text: BASE }, ...files], objects: [], diagnostics: [] };
  }
}

/** One of bench:scale's changes (or the like); true when it moved routes down their file. */
function change(files: Files, rnd: () => number, k: number): boolean {
  const all = [...files.files.values()].flat();
  const one = all[Math.floor(rnd() * all.length)] as number;
  const r = rnd();
  if (r < 0.35) files.paths.set(one, `/edited-${k}/${one}`);
  else if (r < 0.45) files.paths.delete(one);
  else if (r < 0.6) files.files.set(`added-${k}.yaml`, [1000 + k]);
  else if (r < 0.75) {
    const added = [...files.files.keys()].find((f) => f.startsWith('added'));
    if (added) files.files.delete(added);
  } else if (r < 0.92) {
    files.paths.set(one, `/x-${k}`);
    files.paths.set(all[Math.floor(rnd() * all.length)] as number, `/y-${k}`);
  } else {
    files.comments++;
    return true;
  }
  return false;
}

describe('one change, one route made anew', () => {
  for (const seed of [1, 2, 3]) {
    it(`makes anew only the routes a change changed, one change after another (seed ${seed})`, () => {
      const rnd = rng(seed);
      const files = new Files();
      const compiler = new IncrementalCompiler();
      const writer = new CompiledWriter();
      const reader = new CompiledReader();
      let held: readonly TableRoute[] = [];
      let docs = new Map<string, string>();
      let moved = false;
      for (let step = 1; step <= 80; step++) {
        const compiled = compiler.compile(files.provided());
        const served = snapshotFrom(compiledData(compiled, writer, step, reader.held), reader).table.routes;
        const now = files.documents();
        const changed = [...now].filter(([name, text]) => docs.get(name) !== text).map(([name]) => name);
        if (step > 1) {
          const before = new Set(held);
          const renewed = served.filter((r) => !before.has(r)).map((r) => r.name);
          expect(renewed.sort(), `step ${step}`).toEqual(changed.sort());
          const walked = compiled.statuses.filter((s) => s.kind === 'HTTPRoute').length - compiler.keptRoutes;
          if (!moved) expect(walked, `step ${step}`).toBe(changed.length);
        }
        held = served;
        docs = now;
        moved = change(files, rnd, step);
      }
    });
  }
});
