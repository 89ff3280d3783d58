// The configuration paths a long-running command serves: each must exist and the whole must
// hold at least one file, or the command would start, say ready, and serve nothing. With
// --allow-empty it starts anyway and waits for files to appear.
import { readConfigFiles } from '../provider/config-files.js';
import { type CommandIO, UsageError } from './command.js';

export async function checkConfigPaths(
  paths: readonly string[],
  allowEmpty: boolean,
  io: CommandIO,
  prefix: string,
): Promise<void> {
  const read = await readConfigFiles(paths);
  const missing = read.diagnostics.filter((d) => d.code === 'io-error');
  const problem =
    missing.length > 0
      ? `--config ${missing.map((d) => d.file).join(', ')}: ${missing[0]?.message ?? 'cannot be read'}`
      : read.files.length === 0
        ? `--config ${paths.join(', ')}: no *.yaml, *.yml or *.json file there, so there is nothing to serve`
        : undefined;
  if (problem === undefined) return;
  if (!allowEmpty) {
    throw new UsageError(
      `${problem}. Give a directory of Gateway API YAML, or --allow-empty to start and wait for files`,
    );
  }
  io.err(`${prefix}: ${problem}; --allow-empty: starting anyway, waiting for files to appear`);
}
