// Reads a provider once for a one-shot CLI command (configuration paths: the file provider) and
// compiles what it holds with the one snapshot compiler the served configuration uses too. An
// unreadable path is a usage/I-O failure (exit 2), reported once, here.
import type { Provider } from '../provider/provider.js';
import { compileConfig, type Snapshot } from '../pipeline/snapshot.js';
import type { CommandIO } from './command.js';
import { filesProvider } from './sources.js';
import { diagnosticsText } from './status-text.js';

export interface LoadedSnapshot {
  readonly snapshot: Snapshot;
  /** How many files were read. */
  readonly fileCount: number;
}

/** The compiled snapshot of what the provider holds, I/O problems included as its diagnostics. */
export async function readSnapshot(provider: Provider): Promise<LoadedSnapshot> {
  const provided = await provider.read();
  return { snapshot: compileConfig(provided), fileCount: provided.documents.length };
}

/** The compiled snapshot, or undefined after reporting I/O errors to `io`. */
export async function loadSnapshot(
  paths: readonly string[],
  io: CommandIO,
): Promise<LoadedSnapshot | undefined> {
  const loaded = await readSnapshot(filesProvider(paths));
  const ioErrors = loaded.snapshot.diagnostics.filter((d) => d.code === 'io-error');
  if (ioErrors.length > 0) {
    io.err(diagnosticsText(ioErrors));
    return undefined;
  }
  return loaded;
}
