// Reads configuration paths for a one-shot CLI command and compiles them. An unreadable
// path is a usage/I-O failure (exit 2), reported once, here.
import { readConfigFiles } from '../runtime/config-files.js';
import { compileSnapshot, type Snapshot } from '../runtime/snapshot.js';
import type { CommandIO } from './command.js';
import { diagnosticsText } from './status-text.js';

export interface LoadedSnapshot {
  readonly snapshot: Snapshot;
  /** How many YAML files were read. */
  readonly fileCount: number;
}

/** The compiled snapshot, or undefined after reporting I/O errors to `io`. */
export async function loadSnapshot(
  paths: readonly string[],
  io: CommandIO,
): Promise<LoadedSnapshot | undefined> {
  const read = await readConfigFiles(paths);
  const ioErrors = read.diagnostics.filter((d) => d.code === 'io-error');
  if (ioErrors.length > 0) {
    io.err(diagnosticsText(ioErrors));
    return undefined;
  }
  return { snapshot: compileSnapshot(read.files), fileCount: read.files.length };
}
