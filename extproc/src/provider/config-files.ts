// Reads configuration from disk: directories recursively (*.yaml, *.yml, *.json, as
// `kubectl apply -f` does; hidden files and directories skipped) and single files of any name.
// Paths in the result are relative to the configuration root, as diagnostics show them.
import type { BigIntStats } from 'node:fs';
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

/** What reading a file needs of the file system; a test gives one that writes while it reads. */
export interface FileReads {
  readonly stat: (path: string) => Promise<BigIntStats>;
  readonly readFile: (path: string) => Promise<Buffer>;
}

const NODE_READS: FileReads = {
  stat: (path) => stat(path, { bigint: true }),
  readFile: (path) => readFile(path),
};

/**
 * Reads of a file that changed while it was read, before it is reported: a file written in
 * place (cp, a shell redirect, an editor without rename) can be read between two of its
 * writes, and half a file must never be served. Its events make the store read it again.
 */
export const STEADY_READS = 3;

/** What changes when a file is written or replaced. */
const stamp = (st: BigIntStats): string => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

/**
 * Texts read before, for a reader that knows which files changed since (the file provider, from
 * its events): a regular file whose stamp is the one its kept text was read under is taken from
 * here unread when `text` gives it; every text handed over is told to `read`.
 */
export interface KeptTexts {
  text(abs: string, stamp: string): string | undefined;
  read(abs: string, stamp: string, text: string): void;
}

/**
 * The file's text, read again while it changed between the stat before the read and the one
 * after it (or the bytes read are not its size then); a message when it is too large or kept
 * changing. Anything but a regular file is read once.
 */
async function readSteady(
  abs: string,
  io: FileReads,
  kept: KeptTexts | undefined,
): Promise<{ text: string } | { message: string }> {
  let before = await io.stat(abs);
  const known = before.isFile() ? kept?.text(abs, stamp(before)) : undefined;
  if (known !== undefined) {
    kept?.read(abs, stamp(before), known);
    return { text: known };
  }
  for (let tries = 1; ; tries++) {
    if (before.size > MAX_CONFIG_FILE_BYTES) {
      const size = Number(before.size);
      return { message: `the file is ${mib(size)}; files over ${mib(MAX_CONFIG_FILE_BYTES)} are not read` };
    }
    const bytes = await io.readFile(abs);
    // A pipe or a device (`--config <(…)`, /dev/stdin) has no size to check and cannot be read twice.
    if (!before.isFile()) return { text: bytes.toString('utf8') };
    const after = await io.stat(abs);
    if (stamp(after) === stamp(before) && BigInt(bytes.length) === after.size) {
      const text = bytes.toString('utf8');
      kept?.read(abs, stamp(after), text);
      return { text };
    }
    if (tries === STEADY_READS) {
      return {
        message: `the file changed while it was read, ${STEADY_READS} times: it is being written in place; write it under another name and rename it over this one`,
      };
    }
    before = after;
  }
}

/**
 * Reads every path (directory or file). The root is the first path when it is a directory,
 * else its parent directory. A path that cannot be read, or a file that kept changing while it
 * was read, is an `io-error` diagnostic. With `kept`, a file it holds the text of is not read.
 */
export async function readConfigFiles(
  paths: readonly string[],
  io: FileReads = NODE_READS,
  kept?: KeptTexts,
): Promise<ConfigFiles> {
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
      const read = await readSteady(abs, io, kept);
      const file = rel.split('\\').join('/');
      if ('text' in read) files.push({ path: file, text: read.text });
      else diagnostics.push({ code: 'io-error', file, line: 0, field: '', message: read.message });
    } catch (e) {
      diagnostics.push({ code: 'io-error', file: rel, line: 0, field: '', message: (e as Error).message });
    }
  }
  return { root: base, files, diagnostics };
}
