// Translation keeps a route's table entry as the same object while it is equal to the last one
// for its id (translate-memo.ts), also after routes were deleted between (the ids that went are
// let go one by one, not by making the map of every id again): after every step of seeded
// random deletions, a route that only moved down its file, so is translated anew, gives the very
// entry the last table had for it.
import { describe, expect, it } from 'vitest';
import { IncrementalCompiler } from '../../extproc/src/pipeline/incremental-compiler.js';
import type { TableRoute } from '../../extproc/src/policy/policy-table.js';
import type { ProvidedConfig } from '../../extproc/src/provider/provider.js';
import { EDGE_BASE_YAML as BASE, edgeRouteYaml } from '../support/edge-gateway-yaml.js';
import { mulberry32 as random } from '../support/mulberry32.js';

describe('kept table entries', () => {
  for (const seed of [1, 2, 3]) {
    it(`are the last table's objects for routes equal to theirs, after deletions and moves (seed ${seed})`, () => {
      const rnd = random(seed);
      // Each route's document, with the comment lines above it that move it down its file.
      const docs = Array.from({ length: 30 }, (_, i) => ({
        name: `r-${String(i).padStart(2, '0')}`,
        above: '',
      }));
      const input = (): ProvidedConfig => ({
        documents: [
          { path: 'base.yaml', text: BASE },
          {
            path: 'routes.yaml',
            text: docs.map((d) => `${d.above}${edgeRouteYaml(d.name, `/${d.name}`)}`).join('---\n'),
          },
        ],
        objects: [],
        diagnostics: [],
      });
      const compiler = new IncrementalCompiler();
      let last = compiler.compile(input()).table.routes;
      const steps: string[] = [];
      for (let step = 0; step < 20 && docs.length > 2; step++) {
        // A route deleted; then a comment line on top of the file moves every other route down
        // it, so each is translated anew (the first one's text changed; the rest only moved).
        const gone = docs.splice(Math.floor(rnd() * docs.length), 1)[0]?.name;
        steps.push(`${gone} deleted`);
        compiler.compile(input());
        const first = docs[0] as (typeof docs)[number];
        first.above += '# moved\n';
        const routes = compiler.compile(input()).table.routes;
        const byId = new Map(last.map((r) => [r.id, r]));
        const renewed = routes.filter((r: TableRoute) => byId.get(r.id) !== r).map((r) => r.name);
        expect(renewed, steps.join('; ')).toEqual([first.name]);
        last = routes;
      }
    });
  }
});
