// Reads configuration from disk: directories recursively (*.yaml, *.yml, *.json, as
// `kubectl apply -f` does; hidden files and directories skipped) and single files of any name.
// Paths in the result are relative to the configuration root, as diagnostics show them.
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { Diagnostic } from '../gatewayapi/diagnostic.js';
import type { ConfigFile } from '../gatewayapi/parse.js';

export interface ConfigFiles {
  /** The directory paths are shown relative to. */
  readonly root: string;
  readonly files: readonly ConfigFile[];
  readonly diagnostics: readonly Diagnostic[];
}

const LOADED = /\.(ya?ml|json)$/i;

/** Whether a file of this name in a configuration directory is loaded (so its changes matter). */
export function isLoadedFile(name: string): boolean {
  return !name.startsWith('.') && LOADED.test(name);
}

/**
 * The largest configuration file read: 10,000 HTTPRoutes take about 3.3 MiB, and parsing a
 * file far beyond that would hold the control service for minutes and gigabytes.
 */
export const MAX_CONFIG_FILE_BYTES = 16 * 1024 * 1024;

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile() && isLoadedFile(e.name)) out.push(p);
  }
}

/**
 * Reads every path (directory or file). The root is the first path when it is a directory,
 * else its parent directory. A path that cannot be read is an `io-error` diagnostic.
 */
export async function readConfigFiles(paths: readonly string[]): Promise<ConfigFiles> {
  const diagnostics: Diagnostic[] = [];
  const found: string[] = [];
  let root: string | undefined;
  for (const p of paths) {
    const abs = resolve(p);
    try {
      const st = await stat(abs);
      root ??= st.isDirectory() ? abs : dirname(abs);
      if (st.isDirectory()) await walk(abs, found);
      else found.push(abs);
    } catch (e) {
      diagnostics.push({ code: 'io-error', file: p, line: 0, field: '', message: (e as Error).message });
    }
  }
  const base = root ?? process.cwd();
  const files: ConfigFile[] = [];
  for (const abs of [...new Set(found)]) {
    const rel = relative(base, abs) || abs;
    try {
      const { size } = await stat(abs);
      if (size > MAX_CONFIG_FILE_BYTES) {
        const message = `the file is ${mib(size)}; files over ${mib(MAX_CONFIG_FILE_BYTES)} are not read`;
        diagnostics.push({ code: 'io-error', file: rel.split('\\').join('/'), line: 0, field: '', message });
        continue;
      }
      files.push({ path: rel.split('\\').join('/'), text: await readFile(abs, 'utf8') });
    } catch (e) {
      diagnostics.push({ code: 'io-error', file: rel, line: 0, field: '', message: (e as Error).message });
    }
  }
  return { root: base, files, diagnostics };
}
