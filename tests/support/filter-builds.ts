// The filter's two builds (docs/native-filter.md): steadfast.wasm in Envoy's wasm VM, and the
// same module compiled to an Envoy dynamic module. The behaviour tables run against both.
import { REPO_ROOT } from './paths.js';
import { join } from 'node:path';
import { existsSync } from 'node:fs';

export type FilterBuildName = 'native' | 'wasm';
export const FILTER_BUILDS: readonly FilterBuildName[] = ['native', 'wasm'];

/** The built native module; `npm test` builds it (a missing one fails the run, never skips). */
export function nativeFilterPath(): string {
  const path = join(REPO_ROOT, 'filter/build/libsteadfast.so');
  if (!existsSync(path)) {
    throw new Error(
      "filter/build/libsteadfast.so is missing: `npm run build` builds it (it needs wasm2c from Debian's wabt, which `npm run tools` installs, and a C compiler)",
    );
  }
  return path;
}

/**
 * A counter of the filter, summed over Envoy's scopes: both builds count in `wasmcustom.`,
 * and the native module's upstream half (a cluster's filter) counts in that cluster's scope
 * (`cluster.<name>.wasmcustom.`).
 */
export function filterCounter(stats: ReadonlyMap<string, number>, name: string): number {
  const suffix = `wasmcustom.${name}`;
  let total = 0;
  for (const [key, value] of stats) {
    if (key === suffix || key.endsWith(`.${suffix}`)) total += value;
  }
  return total;
}
