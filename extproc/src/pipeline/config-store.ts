// Holds the current Snapshot of a provider's configuration and keeps it fresh: when the
// provider says something changed (debounced), it reads and compiles a new snapshot and swaps
// it in atomically only if it compiled cleanly and differs from the current one. A failed
// reload keeps the last good snapshot and records why, once per distinct failure.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { formatDiagnostic, isFatal, type Diagnostic } from '../gatewayapi/diagnostic.js';
import type { ProvidedConfig, Provider } from '../provider/provider.js';
import { type ObjectStatus, statusByObject } from '../translate/status.js';
import { type LoadTimes, epochMs } from './load-times.js';
import { type Snapshot, compileConfig } from './snapshot.js';

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
  /** Where the objects come from; its owner starts and closes it. */
  readonly provider: Provider;
  /** Quiet period after the last change before reloading; default the provider's settleMs, else 200. */
  readonly debounceMs?: number;
  /** Compiles a snapshot; `steadfast serve` does it on a worker thread. Default: compileConfig. */
  readonly compile?: (provided: ProvidedConfig) => Snapshot | Promise<Snapshot>;
}

/** Without the provider's maxWaitMs, a run of changes postpones its reload by at most this many debounce periods. */
const MAX_WAIT = 5;

/** What a reload read and compiled (or why it could not), before it is swapped in. */
interface Prepared {
  readonly provided: ProvidedConfig | undefined;
  readonly next?: Snapshot;
  /** Why the read or the compile failed (its first line). */
  readonly failed?: string;
  readonly changedAt: number | undefined;
  readonly readAt: number;
  readonly readDoneAt: number;
}

/** A digest of what a provider handed over: an unchanged input fails the same way. */
function inputDigest(provided: ProvidedConfig): string {
  return createHash('sha256').update(JSON.stringify(provided)).digest('hex');
}

/** One line per error (file:line: message); a message of several lines keeps its first. */
export function errorLines(errors: readonly Diagnostic[]): string[] {
  return errors.map((d) => formatDiagnostic(d).split('\n')[0] ?? '');
}

export class ConfigStore extends EventEmitter<ConfigStoreEvents> {
  private current: Snapshot | undefined;
  private gen = 0;
  private failure: ReloadFailure | undefined;
  readonly provider: Provider;
  private unwatch: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the first change not yet reloaded came (performance.now()). */
  private pendingSince: number | undefined;
  private reloading: Promise<boolean> | undefined;
  private again = false;
  /** Digest of the input of the last failed reload. */
  private failedInput = '';
  /** The first change event not yet read (epoch ms). */
  private changedAt: number | undefined;
  /** When the current snapshot's load passed each stage (load-times.ts). */
  private times: LoadTimes | undefined;
  /** Keeps or discards the reload begun early (loadEarly), until the settle decides. */
  private early: ((keep: boolean) => void) | undefined;
  /** When the last change came (performance.now()). */
  private lastChangeAt: number | undefined;

  constructor(private readonly options: ConfigStoreOptions) {
    super();
    this.provider = options.provider;
  }

  /** The current snapshot; throws before the first load. */
  get snapshot(): Snapshot {
    if (!this.current) throw new Error('ConfigStore: not loaded yet; await load() first');
    return this.current;
  }

  /** Increments on every swap, starting at 1 after the first load; a reload that changes nothing keeps it. */
  get generation(): number {
    return this.gen;
  }

  /** When the current snapshot's change was seen, read and compiled (undefined before the first load). */
  get loadTimes(): LoadTimes | undefined {
    return this.times;
  }

  /** The last failed reload, cleared by the next successful one. */
  get lastFailure(): ReloadFailure | undefined {
    return this.failure;
  }

  /**
   * Loads the configuration. The first load always installs a snapshot (even with errors,
   * which then show in status); later loads swap only when they compile cleanly and differ
   * from the current snapshot. True when the configuration being served is the one just read.
   */
  async load(): Promise<boolean> {
    return this.run(() => this.doLoad());
  }

  /** Runs one reload at a time: asked for while one runs, the reload runs again once it ends. */
  private async run(reload: () => Promise<boolean>): Promise<boolean> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = reload();
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
    const changedAt = this.changedAt;
    this.changedAt = undefined;
    return this.install(await this.prepare(changedAt));
  }

  /**
   * A reload begun at once, for a provider that reads early: its swap waits for the settle's
   * timer, which keeps it (`settle(true)`), or a change before that discards it (`settle(false)`):
   * it read too soon, and the settle's own reload follows it.
   */
  private loadEarly(): void {
    const changedAt = this.changedAt;
    let settle: (keep: boolean) => void = () => {};
    const settled = new Promise<boolean>((resolve) => (settle = resolve));
    this.early = settle;
    void this.run(async () => {
      const prepared = await this.prepare(changedAt);
      return (await settled) && this.install(prepared);
    });
  }

  /** Reads the provider and compiles what it holds. */
  private async prepare(changedAt: number | undefined): Promise<Prepared> {
    let provided: ProvidedConfig | undefined;
    const readAt = epochMs();
    let readDoneAt = readAt;
    try {
      provided = await this.provider.read();
      readDoneAt = epochMs();
      const next = await (this.options.compile ?? compileConfig)(provided);
      return { provided, next, changedAt, readAt, readDoneAt };
    } catch (e) {
      return { provided, failed: (e as Error).message.split('\n')[0] ?? '', changedAt, readAt, readDoneAt };
    }
  }

  /** Swaps in what prepare() compiled, unless it failed, has fatal errors or changes nothing. */
  private install(prepared: Prepared): boolean {
    const { provided, next, changedAt, readAt, readDoneAt } = prepared;
    if (!next) return this.fail([], `reload failed: ${prepared.failed ?? ''}`, provided);
    const fatal = next.diagnostics.filter(isFatal);
    if (fatal.length > 0 && this.current) {
      return this.fail(
        fatal,
        `reload kept the previous configuration: ${errorLines(fatal).join('; ')}`,
        provided,
      );
    }
    if (this.current && fatal.length === 0 && next.fingerprint === this.current.fingerprint) {
      // Same objects, same status: nothing to swap (a file touched, a comment edited).
      this.failure = undefined;
      this.failedInput = '';
      return true;
    }
    this.current = next;
    this.gen++;
    const compiled = { readAt, readDoneAt, builtAt: epochMs() };
    this.times = changedAt === undefined ? compiled : { changedAt, ...compiled };
    this.failure =
      fatal.length > 0 ? { at: new Date(), errors: fatal, message: errorLines(fatal).join('; ') } : undefined;
    this.failedInput = fatal.length > 0 && provided ? inputDigest(provided) : '';
    this.emit('swap', next, this.gen);
    // Built only if the provider reads it: statuses from the compiler thread are parsed on first
    // read, and the file provider never needs them.
    let objects: ReadonlyMap<string, ObjectStatus> | undefined;
    this.provider.report({
      generation: this.gen,
      get objects() {
        return (objects ??= next.statusesByObject ?? statusByObject(next.statuses));
      },
    });
    return true;
  }

  /** Records a failed reload; the same failure of the same input (nothing changed since) is not reported again. */
  private fail(errors: readonly Diagnostic[], message: string, provided: ProvidedConfig | undefined): false {
    const input = provided ? inputDigest(provided) : '';
    if (this.failure && input !== '' && this.failedInput === input) return false;
    this.failure = { at: new Date(), errors, message };
    this.failedInput = input;
    this.emit('reload-failed', this.failure);
    return false;
  }

  /** Watches the provider and reloads after its changes settle. */
  watch(): void {
    if (this.unwatch) return;
    this.unwatch = this.provider.watch(() => this.onChange());
  }

  /**
   * Reloads once changes have been quiet for the debounce, but never later than the provider's
   * maxWaitMs (else MAX_WAIT debounces) after the first of them: changes that keep coming (a
   * busy cluster's endpoints) must not hold every other change back for as long as they last.
   * A provider that reads early is read and compiled as soon as a change finds the store idle
   * after a settle's quiet; the settle then holds only the swap, so a lone change waits for the
   * longer of the two, not both, and a change within the settle still goes into one generation
   * with it. A change that follows another within the settle is churn (an EndpointSlice that
   * keeps moving): read early, it would be discarded by the next, a second compile per generation.
   */
  private onChange(): void {
    const quiet = this.options.debounceMs ?? this.provider.settleMs ?? 200;
    const maxWait = this.provider.maxWaitMs ?? quiet * MAX_WAIT;
    const now = performance.now();
    const afterQuiet = this.lastChangeAt === undefined || now - this.lastChangeAt >= quiet;
    this.lastChangeAt = now;
    const idle =
      afterQuiet && this.pendingSince === undefined && !this.reloading && this.current !== undefined;
    this.pendingSince ??= now;
    this.changedAt ??= epochMs();
    this.early?.(false);
    this.early = undefined;
    if (idle && this.provider.readsEarly === true) this.loadEarly();
    const due = Math.min(now + quiet, this.pendingSince + Math.max(quiet, maxWait));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pendingSince = undefined;
        const early = this.early;
        this.early = undefined;
        if (!early) return void this.load();
        // Nothing came since the early reload read: it is this settle's reload.
        this.changedAt = undefined;
        early(true);
      },
      Math.max(0, due - now),
    );
  }

  close(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pendingSince = undefined;
    this.early?.(false);
    this.early = undefined;
  }
}
