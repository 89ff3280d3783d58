// The file provider: Gateway API YAML (or JSON) from files and directories. It reads them
// as documents with their paths, watches every directory below them, and says a change
// happened only for files it loads (*.yaml, *.yml, *.json) or when directories come or
// go — an editor's swap file or a log kept in the folder changes nothing. A path that does
// not exist yet (a volume mounted later) is looked for again until it appears. Files
// cannot hold status: the admin API and `steadfast validate` show it instead.
import { type FSWatcher, existsSync, readdirSync, statSync, watch } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type FileReads, type KeptTexts, isLoadedFile, readConfigFiles } from './config-files.js';
import type { ProvidedConfig, Provider, StatusReport } from './provider.js';

export interface FileProviderOptions {
  /** Files or directories; the first sets the root diagnostics are relative to. */
  readonly paths: readonly string[];
  /** How often to look again for a path that does not exist yet, while watching. */
  readonly retryMs?: number;
  readonly log?: (line: string) => void;
  /** How a file is read (a test gives its own). */
  readonly reads?: FileReads;
}

/** Quiet period before directories are rescanned after events for files that are not loaded. */
const RESCAN_MS = 100;

/**
 * How long the change of a file found empty is held back. A writer in place (cp, a shell
 * redirect, a program writing what it makes) truncates the file first and writes later: up to
 * 165 ms later in bench/file-write-gaps.ts at load 3-7 on 2 cores, where the settle would read
 * it empty and serve none of its routes. Its write reports the change; a file emptied on purpose
 * is read this long after.
 */
const EMPTY_HOLD_MS = 1000;

/** The file's size, or -1 when it cannot be read (gone: a change to report at once). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

export class FileProvider implements Provider {
  readonly description: string;
  /**
   * A save's events come a few ms apart: an editor's write-then-rename or truncate-then-write,
   * a ConfigMap volume's `..data` symlink swap (one rename), a `git checkout` writing file after
   * file. bench/file-write-gaps.ts, 10,000 routes written in place at load 7 on 2 cores: gaps
   * after a file held part of its text 3-9 ms (medians), over 15 ms in 4 of a run's 240 saves
   * (dd, vim) and over 50 ms in 1; the longer gaps come after a truncation, which EMPTY_HOLD_MS covers,
   * and a write during the read makes it read again (config-files.ts). So 15 ms of quiet; a
   * save by rename is never read half-written (docs/attach.md says to save so).
   */
  readonly settleMs = 15;
  /**
   * A run of saves that never pauses for 15 ms (a large checkout on a busy machine) is still
   * gathered for up to 1 s, so a half-written tree is seldom served in between: files have no
   * stream of changes (as an API server's endpoints) that a shorter cap would be for.
   */
  readonly maxWaitMs = 1000;
  /** Watched directories, each with the one file name it cares about (a single-file path) or all. */
  private readonly watchers = new Map<string, FSWatcher>();
  private changed: ((what: string) => void) | undefined;
  private rescan: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Files found empty after their event, each with the timer that reports it if it stays so. */
  private readonly emptied = new Map<string, NodeJS.Timeout>();
  /**
   * Each file's text as the last read took it, by absolute path, with the stamp it was read
   * under: while watching, a file no event named since and of the same stamp is not read again
   * (a change to one file among many reads that one; the 3.4 MB of 10,000 routes took ~2 ms).
   */
  private texts = new Map<string, { readonly stamp: string; readonly text: string }>();
  /**
   * The files events named since the last read began (absolute paths), read again whatever
   * their stamp (two writes of one size within a tick of the file system's clock leave it the
   * same); undefined after an event that named no file: then every file is read.
   */
  private named: Set<string> | undefined = new Set();

  constructor(private readonly options: FileProviderOptions) {
    this.description = options.paths.join(', ');
  }

  /** Nothing to connect to: a path that cannot be read is an io-error of read(). */
  async start(): Promise<void> {}

  async read(): Promise<ProvidedConfig> {
    // Directories may have come or gone since the last read: watch what is there now.
    this.syncWatchers();
    const read = await readConfigFiles(this.options.paths, this.options.reads, this.keptTexts());
    return { documents: read.files, objects: [], diagnostics: read.diagnostics };
  }

  /**
   * The texts this read may take unread, and what it read for the next. Only while watching
   * since before the last read: a file written meanwhile without a watch names no file.
   */
  private keptTexts(): KeptTexts {
    // Taken as the read begins: an event during the read names its file for the next read.
    const named = this.named;
    this.named = new Set();
    const last = this.changed && named ? this.texts : undefined;
    const next = new Map<string, { readonly stamp: string; readonly text: string }>();
    this.texts = this.changed ? next : new Map();
    return {
      text: (abs, stamp) => {
        const kept = named?.has(abs) ? undefined : last?.get(abs);
        return kept?.stamp === stamp ? kept.text : undefined;
      },
      read: (abs, stamp, text) => void next.set(abs, { stamp, text }),
    };
  }

  watch(changed: (what: string) => void): () => void {
    this.changed = changed;
    this.syncWatchers();
    this.lookForMissing();
    return () => this.close();
  }

  /** Files hold no status. */
  report(_status: StatusReport): void {}

  private lookForMissing(): void {
    if (this.retry || this.options.paths.every((p) => existsSync(p))) return;
    const every = this.options.retryMs ?? 2000;
    this.options.log?.(`waiting for the configuration to appear; trying again every ${every} ms`);
    this.retry = setInterval(() => {
      // Quietly until every path exists: a reload that fails would log and count each time.
      if (!this.options.paths.every((p) => existsSync(p))) return;
      clearInterval(this.retry);
      this.retry = undefined;
      this.syncWatchers();
      this.changed?.(this.options.paths.join(', '));
    }, every);
    this.retry.unref();
  }

  private onEvent(dir: string, file: string | null, only: string | undefined): void {
    const what = file === null ? dir : join(dir, file);
    // An event that names no file may stand for any: the next read reads them all.
    if (file === null) this.named = undefined;
    if (only !== undefined) {
      if (file === null) this.changed?.(what);
      else if (file === only) this.fileChanged(what);
      return;
    }
    if (file === null) {
      this.changed?.(what);
      return;
    }
    if (isLoadedFile(basename(file))) {
      this.fileChanged(what);
      return;
    }
    // Not a file we load; it may be a directory that came or went.
    if (this.rescan) return;
    this.rescan = setTimeout(() => {
      this.rescan = undefined;
      if (this.syncWatchers()) this.changed?.(`the directories under ${this.description}`);
    }, RESCAN_MS);
  }

  /** Reports a loaded file's change, unless it is empty now (EMPTY_HOLD_MS). */
  private fileChanged(path: string): void {
    this.named?.add(resolve(path));
    const held = this.emptied.get(path);
    if (sizeOf(path) !== 0) {
      clearTimeout(held);
      this.emptied.delete(path);
      this.changed?.(path);
      return;
    }
    if (held) return;
    const timer = setTimeout(() => {
      this.emptied.delete(path);
      this.changed?.(path);
    }, EMPTY_HOLD_MS);
    timer.unref();
    this.emptied.set(path, timer);
  }

  /** Watches every directory under the paths; true when the set of directories changed. */
  private syncWatchers(): boolean {
    if (!this.changed) return false;
    const wanted = new Map<string, string | undefined>();
    for (const p of this.options.paths) {
      try {
        // A single file is watched through its directory: editors often save by renaming a new file over it.
        if (statSync(p).isDirectory()) for (const dir of directoriesUnder(p)) wanted.set(dir, undefined);
        else wanted.set(dirname(p), basename(p));
      } catch {
        // A path that cannot be read still loads (as an io-error); lookForMissing waits for it.
      }
    }
    let moved = false;
    for (const [dir, w] of this.watchers) {
      if (!wanted.has(dir)) {
        w.close();
        this.watchers.delete(dir);
        moved = true;
      }
    }
    for (const [dir, only] of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        // Each directory on its own: Node 20's recursive fs.watch on Linux stops reporting a
        // file once it has been replaced by a rename (how tools write files atomically).
        const w = watch(dir, (_event, file) => this.onEvent(dir, file, only));
        w.on('error', () => this.onEvent(dir, null, only));
        this.watchers.set(dir, w);
        // A new directory may already hold files written before it was watched.
        moved = true;
      } catch {
        // Gone between the scan and the watch: the next event rescans.
      }
    }
    return moved;
  }

  close(): void {
    this.changed = undefined;
    this.texts = new Map();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    if (this.rescan) clearTimeout(this.rescan);
    if (this.retry) clearInterval(this.retry);
    for (const timer of this.emptied.values()) clearTimeout(timer);
    this.emptied.clear();
    this.rescan = undefined;
    this.retry = undefined;
  }
}

/** `dir` and every directory below it, skipping hidden ones as the loader does. */
function directoriesUnder(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && !e.name.startsWith('.')) out.push(...directoriesUnder(join(dir, e.name)));
  }
  return out;
}
