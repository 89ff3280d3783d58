// Attempt numbers shared through a directory, for backends that share no memory (one container per
// demo backend in docker compose, all mounting one volume). Attempt n of a uuid is the file
// `<sha256(uuid)>.<n>`, created with O_EXCL: exactly one process wins each number, so two retries
// landing on two containers at once still get distinct numbers. Files older than `maxAgeMs` are
// removed now and then, so the directory stays small.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AttemptCounter } from './attempt-ledger.js';

export interface DirectoryCounterOptions {
  /** How long a uuid's attempts are remembered; default 10 minutes. */
  readonly maxAgeMs?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
}

export class DirectoryAttemptCounter implements AttemptCounter {
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #nextSweep = 0;

  constructor(
    readonly directory: string,
    options: DirectoryCounterOptions = {},
  ) {
    this.#maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
    mkdirSync(directory, { recursive: true });
  }

  next(uuid: string): number {
    this.#sweep();
    const key = fileKey(uuid);
    for (let n = this.#highest(key) + 1; ; n++) {
      try {
        closeSync(openSync(join(this.directory, `${key}.${n}`), 'wx'));
        return n;
      } catch (error) {
        // Another backend took this number first: try the next one.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  }

  count(uuid: string): number {
    return this.#highest(fileKey(uuid));
  }

  /** The highest number taken for the key; numbers are taken in order, so the first gap ends them. */
  #highest(key: string): number {
    let n = 0;
    while (existsSync(join(this.directory, `${key}.${n + 1}`))) n++;
    return n;
  }

  /** Forgets the uuids whose latest attempt is older than maxAgeMs (all of a uuid's files at once). */
  #sweep(): void {
    const now = this.#now();
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + Math.max(1000, this.#maxAgeMs / 10);
    const latest = new Map<string, number>();
    const files = new Map<string, string[]>();
    for (const name of readdirSync(this.directory)) {
      const key = name.slice(0, name.lastIndexOf('.'));
      try {
        latest.set(key, Math.max(latest.get(key) ?? 0, statSync(join(this.directory, name)).mtimeMs));
        files.set(key, [...(files.get(key) ?? []), name]);
      } catch {
        // Removed by another backend meanwhile.
      }
    }
    for (const [key, at] of latest) {
      if (now - at <= this.#maxAgeMs) continue;
      for (const name of files.get(key) ?? []) rmSync(join(this.directory, name), { force: true });
    }
  }
}

function fileKey(uuid: string): string {
  return createHash('sha256').update(uuid).digest('hex');
}
