// The reference ext_proc server (bench/reference-ext-proc/, Go: grpc-go and
// go-control-plane) that variant V9 runs instead of `steadfast serve`. Built here with
// `go build` into bench/tmp/ on first use in a run; Go's own build cache makes a rebuild
// of unchanged sources take about a second. Modules come from the Go module proxy.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** What the server prints once it accepts connections. */
export const REFERENCE_READY = /listening on (\S+):(\d+)/;

let built: string | undefined;

/** Builds the server (once per process) and returns the binary's path; throws with go's output. */
export function referenceServerBinary(root: string): string {
  if (built !== undefined) return built;
  const source = join(root, 'bench', 'reference-ext-proc');
  const binary = join(root, 'bench', 'tmp', 'reference-ext-proc');
  const r = spawnSync('go', ['build', '-o', binary, '.'], {
    cwd: source,
    encoding: 'utf8',
    // -mod=mod: go.sum pins every module; a missing one is fetched from the module proxy.
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  if (r.error) {
    throw new Error(
      `V9 needs Go to build the reference ext_proc server (${source}): ${r.error.message}. ` +
        'Install Go (the README lists it) or leave V9 out with --only.',
    );
  }
  if (r.status !== 0) throw new Error(`go build in ${source} failed (${r.status}):\n${r.stderr}`);
  built = binary;
  return binary;
}
