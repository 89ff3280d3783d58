// Reads configuration paths for a one-shot CLI command through the file provider and
// compiles them with the one snapshot compiler the served configuration uses too. An
// unreadable path is a usage/I-O failure (exit 2), reported once, here.
import { FileProvider } from '../provider/file.js';
import { compileConfig, type Snapshot } from '../pipeline/snapshot.js';
import type { CommandIO } from './command.js';
import { diagnosticsText } from './status-text.js';

export interface LoadedSnapshot {
  readonly snapshot: Snapshot;
  /** How many files were read. */
  readonly fileCount: number;
}

/** The compiled snapshot of `paths`, I/O problems included as its diagnostics. */
export async function readSnapshot(paths: readonly string[]): Promise<LoadedSnapshot> {
  const provided = await new FileProvider({ paths }).read();
  return { snapshot: compileConfig(provided), fileCount: provided.documents.length };
}

/** The compiled snapshot, or undefined after reporting I/O errors to `io`. */
export async function loadSnapshot(
  paths: readonly string[],
  io: CommandIO,
): Promise<LoadedSnapshot | undefined> {
  const loaded = await readSnapshot(paths);
  const ioErrors = loaded.snapshot.diagnostics.filter((d) => d.code === 'io-error');
  if (ioErrors.length > 0) {
    io.err(diagnosticsText(ioErrors));
    return undefined;
  }
  return loaded;
}
