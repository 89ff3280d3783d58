// How soon a change to the files is read, and that a file written while it is read is never
// served half-written. The settle is timed with fake timers (what is asserted is the order of
// changes and reads, never wall-clock time); a write during a read is made by the test's own
// file reads, at a chosen point of the read.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigStore } from '../../extproc/src/pipeline/config-store.js';
import { type FileReads, STEADY_READS, readConfigFiles } from '../../extproc/src/provider/config-files.js';
import { FileProvider } from '../../extproc/src/provider/file.js';
import type { Provider } from '../../extproc/src/provider/provider.js';
import { settleProbe } from '../support/settle-probe.js';

const routes = (paths: readonly string[]) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
${paths
  .map(
    (p, i) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r${i} }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: Exact, value: ${p} } }] }]
`,
  )
  .join('')}`;

/** The settle the file provider asks for (nothing is watched: it is never started). */
const files = new FileProvider({ paths: ['.'] });

let store: ConfigStore | undefined;
let dir = '';
afterEach(() => {
  store?.close();
  store = undefined;
  vi.useRealTimers();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('the file provider settles a save for 15 ms of quiet, at most 1 s (config-store.test.ts asks)', () => {
  it('reads a lone save 15 ms after its event', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(files, (n) => routes([`/r${n}`]));
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const t0 = performance.now();
    provider.change();
    await vi.advanceTimersByTimeAsync(14);
    expect(provider.readAt).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(provider.readAt.slice(1).map((t) => t - t0)).toEqual([15]);
  });

  it('reads a save whose writes come up to 14 ms apart once, 15 ms after its last', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(files, (n) => routes([`/r${n}`]));
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const t0 = performance.now();
    // A truncation, then writes 3, 14 and 9 ms apart (a writer the machine held back).
    let at = 0;
    provider.change();
    for (const gap of [3, 14, 9]) {
      await vi.advanceTimersByTimeAsync(gap);
      at += gap;
      provider.change();
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(provider.readAt.slice(1).map((t) => t - t0)).toEqual([at + 15]);
  });

  it('is postponed at most 1 s by saves that never pause for 15 ms', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(files, (n) => routes([`/r${n}`]));
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const t0 = performance.now();
    for (let i = 0; i < 120; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(10);
    }
    expect((provider.readAt[1] ?? 0) - t0).toBe(1000);
  });
});

/** Node's reads, with `during` run after the k-th read of a file's bytes (from 1), before its stat after. */
function readsWriting(during: (k: number) => void): FileReads & { reads: number } {
  const io = {
    reads: 0,
    stat: (path: string) => stat(path, { bigint: true }),
    readFile: (path: string) => {
      const bytes = readFileSync(path);
      during(++io.reads);
      return Promise.resolve(bytes);
    },
  };
  return io;
}

describe('a file written while it is read', () => {
  it('is read once when nothing writes it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-steady-'));
    writeFileSync(join(dir, 'a.yaml'), routes(['/a']));
    const io = readsWriting(() => undefined);
    const read = await readConfigFiles([dir], io);
    expect(read.files.map((f) => f.text)).toEqual([routes(['/a'])]);
    expect(read.diagnostics).toEqual([]);
    expect(io.reads).toBe(1);
  });

  it('is read again when a writer wrote it during the read, so the whole save is handed over', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-steady-'));
    const path = join(dir, 'a.yaml');
    const whole = routes(['/a', '/b', '/c']);
    // A writer in place: truncated, the first half written; the read takes that; the rest comes.
    writeFileSync(path, whole.slice(0, whole.length >> 1));
    const io = readsWriting((k) => {
      if (k === 1) writeFileSync(path, whole);
    });
    const read = await readConfigFiles([dir], io);
    expect(read.files.map((f) => f.text)).toEqual([whole]);
    expect(io.reads).toBe(2);
  });

  it('is read again when a complete file was renamed over it during the read', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-steady-'));
    const path = join(dir, 'a.yaml');
    writeFileSync(path, routes(['/a']));
    const io = readsWriting((k) => {
      if (k !== 1) return;
      writeFileSync(join(dir, '.a.yaml.tmp'), routes(['/b']));
      renameSync(join(dir, '.a.yaml.tmp'), path);
    });
    const read = await readConfigFiles([path], io);
    expect(read.files.map((f) => f.text)).toEqual([routes(['/b'])]);
    expect(io.reads).toBe(2);
  });

  it('is read once, whole, when it is a pipe (`--config <(…)`), which has no size to check', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-steady-'));
    const source = join(dir, 'source.yaml');
    const fifo = join(dir, 'pipe.yaml');
    writeFileSync(source, routes(['/a', '/b']));
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', 'cat "$0" > "$1"', source, fifo], { stdio: 'ignore' });
    const written = new Promise((done) => writer.on('exit', done));
    // A second open of the drained pipe would wait for a writer that never comes: refused instead.
    const io = {
      reads: 0,
      stat: (path: string) => stat(path, { bigint: true }),
      readFile: (path: string) =>
        ++io.reads > 1 ? Promise.reject(new Error('the pipe was read twice')) : readFile(path),
    };
    const read = await readConfigFiles([fifo], io);
    expect(await written).toBe(0);
    expect(read.diagnostics).toEqual([]);
    expect(read.files.map((f) => f.text)).toEqual([routes(['/a', '/b'])]);
    expect(io.reads).toBe(1);
  });

  it('is an io-error when it changes during every read, and the store keeps the last good configuration', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-steady-'));
    const path = join(dir, 'a.yaml');
    writeFileSync(path, routes(['/a']));
    let writing = false;
    const io = readsWriting(() => {
      if (writing) writeFileSync(path, readFileSync(path, 'utf8') + '# more\n');
    });
    const provider: Provider = {
      description: dir,
      read: async () => {
        const read = await readConfigFiles([dir], io);
        return { documents: read.files, objects: [], diagnostics: read.diagnostics };
      },
      watch: () => () => undefined,
      report: () => undefined,
      start: () => Promise.resolve(),
      close: () => undefined,
    };
    store = new ConfigStore({ provider });
    expect(await store.load()).toBe(true);
    const good = store.snapshot;
    writing = true;
    io.reads = 0;
    expect(await store.load()).toBe(false);
    expect(io.reads).toBe(STEADY_READS);
    expect(store.snapshot).toBe(good);
    expect(store.lastFailure?.errors).toMatchObject([
      { code: 'io-error', file: 'a.yaml', message: expect.stringMatching(/changed while it was read/) },
    ]);
    // Once the writer is done, the next read hands the file over.
    writing = false;
    expect(await store.load()).toBe(true);
    expect(store.lastFailure).toBeUndefined();
  });
});
