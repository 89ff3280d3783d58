// The test-only build of the filter (filter/assembly/testing/trap-on-demand.ts) as a native
// module: AssemblyScript → wasm (asc, in memory) → native module (the project's own build).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import asc from 'assemblyscript/asc';
import { REPO_ROOT } from '../../support/paths.js';

const ENTRY = 'filter/assembly/testing/trap-on-demand.ts';
const CONFIG = 'filter/assembly/testing/trap.asconfig.json';

/** Builds the trapping native module into `dir` and returns its path. */
export async function buildTrappingModule(dir: string): Promise<string> {
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const { error } = await asc.main(
    [ENTRY, '--config', CONFIG, '--target', 'trap', '--outFile', 'trap.wasm'],
    {
      writeFile(name, contents) {
        if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
      },
      stderr: { write: (chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0 },
      stdout: { write: () => true },
    },
  );
  if (error || !binary) throw new Error(`asc failed: ${error?.message ?? 'no output'}\n${stderr.join('')}`);
  const wasm = join(dir, 'trap.wasm');
  const module = join(dir, 'libsteadfast-trap.so');
  writeFileSync(wasm, binary);
  execFileSync(process.execPath, ['scripts/build-native.mjs', '--wasm', wasm, '--out', module], {
    cwd: REPO_ROOT,
    env: { ...process.env, STEADFAST_REQUIRE_NATIVE: '1' },
    stdio: 'pipe',
  });
  return module;
}
