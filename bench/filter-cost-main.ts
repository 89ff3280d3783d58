// `node dist/bench/filter-cost-main.js`: only the filter's cost in the emulator (seconds, no Envoy).
import { join } from 'node:path';
import { projectRoot } from '../extproc/src/local/project-root.js';
import { measureFilterCost } from './filter-cost.js';

for (const c of await measureFilterCost(join(projectRoot(), 'filter', 'build', 'steadfast.wasm'))) {
  console.log(
    `${c.name.padEnd(32)} ${c.hostCallsPerRequest.toFixed(1).padStart(5)} host calls, ` +
      `${Math.round(c.wasmNsPerRequest).toString().padStart(6)} ns in the filter, ` +
      `${Math.round(c.nsPerRequest).toString().padStart(6)} ns with the emulator  ${JSON.stringify(c.calls)}`,
  );
}
