// Holds the current Snapshot of a configuration directory and keeps it fresh: watches the
// files (fs.watch, debounced), compiles a new snapshot and swaps it in atomically only if
// it compiled cleanly. A failed reload keeps the last good snapshot and records why.
import { EventEmitter } from 'node:events';
import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { formatDiagnostic, isFatal, type Diagnostic } from '../gatewayapi/diagnostic.js';
import type { ConfigFile } from '../gatewayapi/parse.js';
import { readConfigFiles } from './config-files.js';
import { type Snapshot, compileSnapshot } from './snapshot.js';

export interface ReloadFailure {
  readonly at: Date;
  /** Why the new configuration was not swapped in (file, line, field when known). */
  readonly errors: readonly Diagnostic[];
  readonly message: string;
}

export interface ConfigStoreEvents {
  swap: [snapshot: Snapshot, generation: number];
  'reload-failed': [failure: ReloadFailure];
}

export interface ConfigStoreOptions {
  /** Files or directories; the first sets the root diagnostics are relative to. */
  readonly paths: readonly string[];
  /** Quiet period after the last file event before reloading. */
  readonly debounceMs?: number;
  /** Compiles a snapshot; `steadfast serve` does it on a worker thread. Default: compileSnapshot. */
  readonly compile?: (
    files: readonly ConfigFile[],
    extra: readonly Diagnostic[],
  ) => Snapshot | Promise<Snapshot>;
}

export class ConfigStore extends EventEmitter<ConfigStoreEvents> {
  private current: Snapshot | undefined;
  private gen = 0;
  private failure: ReloadFailure | undefined;
  /** Watched directories; directories created later are added when a change arrives. */
  private readonly watchers = new Map<string, FSWatcher>();
  private watching = false;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<boolean> | undefined;
  private again = false;

  constructor(private readonly options: ConfigStoreOptions) {
    super();
  }

  /** The current snapshot; throws before the first load. */
  get snapshot(): Snapshot {
    if (!this.current) throw new Error('ConfigStore: not loaded yet; await load() first');
    return this.current;
  }

  /** Increments on every swap, starting at 1 after the first load. */
  get generation(): number {
    return this.gen;
  }

  /** The last failed reload, cleared by the next successful one. */
  get lastFailure(): ReloadFailure | undefined {
    return this.failure;
  }

  /**
   * Loads the configuration. The first load always installs a snapshot (even with errors,
   * which then show in status); later loads swap only when they compile cleanly.
   */
  async load(): Promise<boolean> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = this.doLoad();
    try {
      return await this.reloading;
    } finally {
      this.reloading = undefined;
      if (this.again) {
        this.again = false;
        void this.load();
      }
    }
  }

  private async doLoad(): Promise<boolean> {
    let next: Snapshot;
    try {
      const read = await readConfigFiles(this.options.paths);
      next = await (this.options.compile ?? compileSnapshot)(read.files, read.diagnostics);
    } catch (e) {
      return this.fail([], `reload failed: ${(e as Error).message}`);
    }
    const fatal = next.diagnostics.filter(isFatal);
    if (fatal.length > 0 && this.current) {
      return this.fail(
        fatal,
        `reload kept the previous configuration: ${fatal.map(formatDiagnostic).join('; ')}`,
      );
    }
    this.current = next;
    this.gen++;
    this.failure =
      fatal.length > 0
        ? { at: new Date(), errors: fatal, message: fatal.map(formatDiagnostic).join('; ') }
        : undefined;
    this.emit('swap', next, this.gen);
    return true;
  }

  private fail(errors: readonly Diagnostic[], message: string): false {
    this.failure = { at: new Date(), errors, message };
    this.emit('reload-failed', this.failure);
    return false;
  }

  /** Watches the configured paths and reloads after file changes settle. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.syncWatchers();
  }

  private onChange(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Directories may have come or gone since the last change.
      this.syncWatchers();
      void this.load();
    }, this.options.debounceMs ?? 200);
  }

  private syncWatchers(): void {
    if (!this.watching) return;
    const wanted = new Map<string, string | undefined>();
    for (const p of this.options.paths) {
      try {
        // A single file is watched through its directory: editors often save by renaming a new file over it.
        if (statSync(p).isDirectory()) for (const dir of directoriesUnder(p)) wanted.set(dir, undefined);
        else wanted.set(dirname(p), basename(p));
      } catch {
        // A path that cannot be read still loads (as an io-error); the next change will tell.
      }
    }
    for (const [dir, w] of this.watchers) {
      if (!wanted.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
    for (const [dir, only] of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        // Each directory on its own: Node 20's recursive fs.watch on Linux stops reporting a
        // file once it has been replaced by a rename (how tools write files atomically).
        const w = watch(dir, (_event, file) => {
          if (only === undefined || file === null || file === only) this.onChange();
        });
        w.on('error', () => this.onChange());
        this.watchers.set(dir, w);
      } catch {
        // Gone between the scan and the watch: the next change rescans.
      }
    }
  }

  close(): void {
    this.watching = false;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
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
