// The file provider: what it hands over, which file events count as a change, and that a file
// no event named keeps the text it was read with (against a fresh read after random writes).
import {
  type BigIntStats,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FileReads, isLoadedFile, readConfigFiles } from '../../extproc/src/provider/config-files.js';
import { FileProvider } from '../../extproc/src/provider/file.js';
import { mulberry32 as random } from '../support/mulberry32.js';

let provider: FileProvider | undefined;
let dir = '';
afterEach(() => {
  provider?.close();
  provider = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('FileProvider', () => {
  it('hands over every loaded file below the paths as documents, relative to the root', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    mkdirSync(join(dir, 'team'));
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    writeFileSync(join(dir, 'team', 'b.yml'), 'b: 1\n');
    writeFileSync(join(dir, 'team', 'c.json'), '{"c": 1}\n');
    writeFileSync(join(dir, 'notes.txt'), 'not configuration\n');
    writeFileSync(join(dir, '.hidden.yaml'), 'h: 1\n');
    writeFileSync(join(dir, '.git', 'd.yaml'), 'd: 1\n');
    provider = new FileProvider({ paths: [dir, join(dir, 'missing')] });
    const provided = await provider.read();
    expect(provided.documents.map((d) => d.path)).toEqual(['a.yaml', 'team/b.yml', 'team/c.json']);
    expect(provided.objects).toEqual([]);
    expect(provided.diagnostics).toMatchObject([{ code: 'io-error', file: join(dir, 'missing') }]);
  });

  it('loads *.yaml, *.yml and *.json, never hidden files', () => {
    expect(['a.yaml', 'b.YML', 'c.json'].map(isLoadedFile)).toEqual([true, true, true]);
    expect(
      ['notes.txt', 'a.yaml~', '.a.yaml.swp', '.a.yaml', '4913', 'gateway.log'].map(isLoadedFile),
    ).toEqual([false, false, false, false, false, false]);
  });

  it('says a change happened only for files it loads', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    const first = new Promise<void>((resolve) =>
      provider?.watch((what) => {
        changes.push(what);
        resolve();
      }),
    );
    // Events arrive in the order the files were written: had any of these counted, it would come first.
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'notes.txt'), `line ${i}\n`);
    writeFileSync(join(dir, '.a.yaml.swp'), 'swap');
    writeFileSync(join(dir, 'gateway.log'), 'log line\n');
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await first;
    expect(changes[0]).toBe(join(dir, 'b.yaml'));
  });
});

describe('FileProvider and a file written in place', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a file truncated empty when it is written, not before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    const a = join(dir, 'a.yaml');
    writeFileSync(a, 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    let seen: () => void = () => undefined;
    provider.watch((what) => {
      changes.push(what);
      seen();
    });
    // A writer in place truncates first; events come in order, so once b's is here a's was handled.
    const b = new Promise<void>((resolve) => (seen = resolve));
    writeFileSync(a, '');
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await b;
    expect(changes).not.toContain(a);
    // Its write reports it, and nothing more comes of the truncation.
    writeFileSync(a, 'a: 2\n');
    const last = new Promise<void>(
      (resolve) => (seen = () => changes.at(-1) === join(dir, 'c.yaml') && resolve()),
    );
    writeFileSync(join(dir, 'c.yaml'), 'c: 1\n');
    await last;
    expect(changes.filter((c) => c !== join(dir, 'b.yaml'))[0]).toBe(a);
    const ofA = () => changes.filter((c) => c === a).length;
    const count = ofA();
    await vi.advanceTimersByTimeAsync(2000);
    expect(ofA()).toBe(count);
  });

  it('reports a file emptied on purpose 1 s after its event', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    writeFileSync(join(dir, 'a.yaml'), 'a: 1\n');
    provider = new FileProvider({ paths: [dir] });
    await provider.read();
    const changes: string[] = [];
    let seen: () => void = () => undefined;
    provider.watch((what) => {
      changes.push(what);
      seen();
    });
    const a = join(dir, 'a.yaml');
    const b = new Promise<void>((resolve) => (seen = resolve));
    writeFileSync(a, '');
    // Events come in order: once b's is here, a's was handled (and held).
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    await b;
    const ofA = () => changes.filter((c) => c === a).length;
    expect(ofA()).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(ofA()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(ofA()).toBe(1);
  });
});

describe('FileProvider and the texts it read', () => {
  /** Reads that count each file read, and a stamp that moves with the size alone. */
  function sizeOnlyReads(reads: string[]): FileReads {
    return {
      // Only the size changes the stamp: a write that keeps it is told by its event alone.
      stat: async (path) => {
        const st = await stat(path, { bigint: true });
        return { ...st, ino: 1n, mtimeNs: 1n, ctimeNs: 1n, isFile: () => st.isFile() } as BigIntStats;
      },
      readFile: async (path) => {
        reads.push(basename(path));
        return readFile(path);
      },
    };
  }

  it('reads again only the files an event named while it watches, whatever their stamp', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
    const a = join(dir, 'a.yaml');
    writeFileSync(a, 'a: 1\n');
    writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
    const reads: string[] = [];
    // Not watching: every read reads every file.
    const once = new FileProvider({ paths: [dir], reads: sizeOnlyReads(reads) });
    await once.read();
    await once.read();
    expect(reads.sort()).toEqual(['a.yaml', 'a.yaml', 'b.yaml', 'b.yaml']);
    reads.length = 0;
    provider = new FileProvider({ paths: [dir], reads: sizeOnlyReads(reads) });
    let seen: (what: string) => void = () => undefined;
    provider.watch((what) => seen(what));
    await provider.read();
    expect(reads.sort()).toEqual(['a.yaml', 'b.yaml']);
    reads.length = 0;
    await provider.read();
    expect(reads).toEqual([]);
    // The same size, so the same stamp: its event names it.
    const named = new Promise<string>((resolve) => (seen = resolve));
    writeFileSync(a, 'a: 2\n');
    expect(await named).toBe(a);
    const provided = await provider.read();
    expect(reads).toEqual(['a.yaml']);
    expect(provided.documents).toEqual([
      { path: 'a.yaml', text: 'a: 2\n' },
      { path: 'b.yaml', text: 'b: 1\n' },
    ]);
  });

  for (const seed of [1, 2, 3]) {
    it(`hands over what a fresh read gives after every step of random writes (seed ${seed})`, async () => {
      const rnd = random(seed);
      dir = mkdtempSync(join(tmpdir(), 'steadfast-provider-'));
      const names = ['a.yaml', 'b.yaml', 'c.yml', 'd.json'];
      for (const name of names.slice(0, 2)) writeFileSync(join(dir, name), `${name}: 0\n`);
      const reads: string[] = [];
      provider = new FileProvider({ paths: [dir], reads: sizeOnlyReads(reads) });
      let seen: (what: string) => void = () => undefined;
      provider.watch((what) => seen(what));
      await provider.read();
      const steps: string[] = [];
      for (let step = 0; step < 30; step++) {
        const name = names[Math.floor(rnd() * names.length)] as string;
        const path = join(dir, name);
        const there = existsSync(path);
        const named = new Promise<void>((resolve) => (seen = (what) => what === path && resolve()));
        const r = rnd();
        if (there && r < 0.15) {
          rmSync(path);
          steps.push(`${name} removed`);
        } else if (r < 0.6) {
          // Most often a text of the same size as the one before (the same stamp here).
          writeFileSync(path, `${name}: ${step % 10}\n`);
          steps.push(`${name} written`);
        } else if (r < 0.8) {
          writeFileSync(join(dir, `.${name}.tmp`), `${name}: ${'x'.repeat(step)}\n`);
          renameSync(join(dir, `.${name}.tmp`), path);
          steps.push(`${name} renamed over`);
        } else {
          writeFileSync(path, `${name}: ${step}${'y'.repeat(Math.floor(rnd() * 3))}\n`);
          steps.push(`${name} written, any size`);
        }
        await named;
        const fresh = await readConfigFiles([dir]);
        expect((await provider.read()).documents, steps.join('; ')).toEqual(fresh.files);
      }
      // Files no event named were taken unread.
      expect(reads.length).toBeLessThan(2 + 30 * 2);
    });
  }
});
