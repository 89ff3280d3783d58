// Whether the second YAML parser still pays for itself: reads 10,000 HTTPRoutes (one file,
// one document each, the shape bench:scale writes) with the fast way (js-yaml values,
// gatewayapi/yaml-fast.ts) and with the `yaml` package alone, in this one process,
// alternating, and prints each way's median and their ratio. Two readings: the whole file
// at once, and the file cut at its `---` lines and read a piece at a time, as the
// incremental compiler reads a file it has not seen (pipeline/incremental-compiler.ts).
//
//   npm run build:ts && node dist/bench/yaml-parsers.js [--routes N] [--rounds N]
import { parseArgs } from 'node:util';
import { parseConfigFiles } from '../extproc/src/gatewayapi/parse.js';
import { documentPieces } from '../extproc/src/pipeline/incremental-compiler.js';
import { scaleRouteYaml } from './scale-routes.js';

const { values } = parseArgs({
  options: { routes: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' } },
});
const routes = Number(values.routes);
const rounds = Number(values.rounds);

const text = Array.from({ length: routes }, (_, i) => scaleRouteYaml(i)).join('---\n');
const pieces = documentPieces(text) ?? [];

type Reading = { readonly name: string; run(fast: boolean): number };
const readings: Reading[] = [
  {
    name: 'whole file',
    run: (fast) => parseConfigFiles([{ path: 'routes.yaml', text }], { fast }).objects.length,
  },
  {
    name: 'piece by piece',
    run: (fast) => {
      let n = 0;
      for (const p of pieces)
        n += parseConfigFiles([{ path: 'routes.yaml', text: p.text }], { fast }).objects.length;
      return n;
    },
  },
];

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

console.log(
  `${routes} HTTPRoutes, ${(text.length / 1e6).toFixed(1)} MB, ${pieces.length} pieces; ${rounds} rounds each`,
);
for (const reading of readings) {
  const ms = { fast: [] as number[], slow: [] as number[] };
  for (let round = 0; round <= rounds; round++) {
    for (const fast of round % 2 === 0 ? [true, false] : [false, true]) {
      const start = performance.now();
      const objects = reading.run(fast);
      const took = performance.now() - start;
      if (objects !== routes) throw new Error(`${reading.name}: read ${objects} objects, not ${routes}`);
      // Round 0 warms both ways up and is not counted.
      if (round > 0) (fast ? ms.fast : ms.slow).push(took);
    }
  }
  const fast = median(ms.fast);
  const slow = median(ms.slow);
  console.log(
    `${reading.name}: js-yaml then yaml when asked ${fast.toFixed(0)} ms, yaml alone ${slow.toFixed(0)} ms: ` +
      `yaml alone takes ${(slow / fast).toFixed(2)}x as long`,
  );
}
