// ConfigStore: loads a directory, swaps in a new snapshot when files change, and keeps the
// last good snapshot when a reload fails.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigStore, type ReloadFailure, errorLines } from '../../extproc/src/pipeline/config-store.js';
import type { Snapshot } from '../../extproc/src/pipeline/snapshot.js';
import { FileProvider } from '../../extproc/src/provider/file.js';
import { type SettleProbe, settleProbe } from '../support/settle-probe.js';

const route = (path: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: Exact, value: ${path} } }] }]
`;

const resolves = (s: Snapshot, path: string) =>
  s.resolver.resolve({ method: 'GET', authority: 'x', path }) !== undefined;

let store: ConfigStore | undefined;
let dir = '';
afterEach(() => {
  store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('ConfigStore', () => {
  it('loads, then swaps on reload and emits the new snapshot', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }) });
    const swaps: number[] = [];
    store.on('swap', (_s, gen) => swaps.push(gen));
    expect(await store.load()).toBe(true);
    expect(resolves(store.snapshot, '/one')).toBe(true);
    writeFileSync(join(dir, 'config.yaml'), route('/two'));
    expect(await store.load()).toBe(true);
    expect(resolves(store.snapshot, '/two')).toBe(true);
    expect(resolves(store.snapshot, '/one')).toBe(false);
    expect(swaps).toEqual([1, 2]);
  });

  it('keeps the last good snapshot when a reload does not parse, and records why', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }) });
    await store.load();
    const before = store.snapshot;
    const failures: ReloadFailure[] = [];
    store.on('reload-failed', (f) => failures.push(f));
    writeFileSync(join(dir, 'config.yaml'), `${route('/two')}\n  broken: [`);
    expect(await store.load()).toBe(false);
    expect(store.snapshot).toBe(before);
    expect(store.generation).toBe(1);
    expect(failures).toHaveLength(1);
    expect(store.lastFailure?.errors[0]).toMatchObject({ code: 'yaml-syntax', file: 'config.yaml' });
    writeFileSync(join(dir, 'config.yaml'), route('/three'));
    expect(await store.load()).toBe(true);
    expect(store.lastFailure).toBeUndefined();
  });

  it('reloads by itself when a watched file changes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }), debounceMs: 20 });
    await store.load();
    store.watch();
    const swapped = new Promise<Snapshot>((resolve) => store?.once('swap', (s) => resolve(s)));
    const second = route('/two').split('---')[1]?.replace('name: r }', 'name: r2 }') ?? '';
    writeFileSync(join(dir, 'more.yaml'), second);
    const next = await swapped;
    expect(resolves(next, '/two')).toBe(true);
  });
});

describe('ConfigStore on a single file', () => {
  it('reloads when the file is replaced by a rename, as editors save', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [file] }), debounceMs: 20 });
    await store.load();
    store.watch();
    const swapped = new Promise<Snapshot>((resolve) => store?.once('swap', (s) => resolve(s)));
    writeFileSync(join(dir, '.config.yaml.tmp'), route('/two'));
    renameSync(join(dir, '.config.yaml.tmp'), file);
    expect(resolves(await swapped, '/two')).toBe(true);
  });
});

describe('ConfigStore on a growing directory tree', () => {
  it('watches a directory created after watch() began, and reads what was written before it was watched', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }), debounceMs: 20 });
    await store.load();
    store.watch();
    const first = new Promise<Snapshot>((resolve) => store?.once('swap', (s) => resolve(s)));
    // The file may land before the new directory is watched: adding the watch reloads.
    mkdirSync(join(dir, 'team'));
    const extra = route('/two').split('---')[1]?.replace('name: r }', 'name: r2 }') ?? '';
    writeFileSync(join(dir, 'team', 'r2.yaml'), extra);
    expect(resolves(await first, '/two')).toBe(true);
    const second = new Promise<Snapshot>((resolve) => store?.once('swap', (s) => resolve(s)));
    const third = route('/three').split('---')[1]?.replace('name: r }', 'name: r3 }') ?? '';
    writeFileSync(join(dir, 'team', 'r3.yaml'), third);
    expect(resolves(await second, '/three')).toBe(true);
  });
});

describe('ConfigStore generations', () => {
  it('makes no new generation when a reload reads the same objects', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }) });
    const swaps: number[] = [];
    store.on('swap', (_s, gen) => swaps.push(gen));
    await store.load();
    const first = store.snapshot;
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    expect(await store.load()).toBe(true);
    expect(store.generation).toBe(1);
    expect(store.snapshot).toBe(first);
    writeFileSync(join(dir, 'config.yaml'), route('/two'));
    expect(await store.load()).toBe(true);
    expect(swaps).toEqual([1, 2]);
  });

  it('loads *.json files as well as *.yaml and *.yml, and nothing else', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    const [gateway, httpRoute] = route('/one').split('---');
    writeFileSync(join(dir, 'gateway.yml'), gateway ?? '');
    writeFileSync(join(dir, 'notes.txt'), httpRoute ?? '');
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }) });
    await store.load();
    expect(store.snapshot.statuses.map((s) => s.kind)).toEqual(['Gateway']);
    writeFileSync(
      join(dir, 'route.json'),
      JSON.stringify({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          rules: [{ matches: [{ path: { type: 'Exact', value: '/json' } }] }],
        },
      }),
    );
    await store.load();
    expect(resolves(store.snapshot, '/json')).toBe(true);
    expect(store.snapshot.statuses.find((s) => s.kind === 'HTTPRoute')?.source).toEqual({
      file: 'route.json',
      line: 1,
    });
  });
});

describe('ConfigStore reload errors', () => {
  it('reports a failed reload once, one line per error, and again only when the content changes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steadfast-store-'));
    writeFileSync(join(dir, 'config.yaml'), route('/one'));
    store = new ConfigStore({ provider: new FileProvider({ paths: [dir] }) });
    await store.load();
    const failures: ReloadFailure[] = [];
    store.on('reload-failed', (f) => failures.push(f));
    writeFileSync(join(dir, 'config.yaml'), `${route('/two')}\n  broken: [`);
    writeFileSync(join(dir, 'other.yaml'), 'a: [\n');
    expect(await store.load()).toBe(false);
    expect(await store.load()).toBe(false);
    expect(failures).toHaveLength(1);
    expect(errorLines(failures[0]?.errors ?? [])).toEqual([
      expect.stringMatching(/^config\.yaml:\d+: \S.*$/),
      expect.stringMatching(/^other\.yaml:\d+: \S.*$/),
    ]);
    writeFileSync(join(dir, 'other.yaml'), 'b: [\n');
    expect(await store.load()).toBe(false);
    expect(failures).toHaveLength(2);
    expect(store.generation).toBe(1);
  });
});

/** A provider that hands over one document and says it changed when told; records when it was read. */
function countingProvider(settleMs?: number, maxWaitMs?: number): SettleProbe {
  return settleProbe({ settleMs, maxWaitMs }, (n) => route(`/r${n}`));
}

describe('ConfigStore reload timing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits for the provider's settle time when no debounce is given", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = countingProvider(30);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const t0 = performance.now();
    provider.change();
    await vi.advanceTimersByTimeAsync(29);
    expect(provider.readAt).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(provider.readAt).toHaveLength(2);
    expect((provider.readAt[1] ?? 0) - t0).toBe(30);
  });

  it('changes that never pause still reload within five debounces of the first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = countingProvider();
    store = new ConfigStore({ provider, debounceMs: 100 });
    await store.load();
    store.watch();
    const t0 = performance.now();
    // A change every 50 ms for 2 s: a quiet period of 100 ms never comes.
    for (let i = 0; i < 40; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(50);
    }
    const reloads = provider.readAt.slice(1).map((t) => t - t0);
    expect(reloads[0]).toBe(500);
    // Each later run is bounded the same way, from its own first change.
    for (const [i, t] of reloads.entries())
      if (i > 0) expect(t - (reloads[i - 1] ?? 0)).toBeLessThanOrEqual(550);
    expect(reloads.length).toBeGreaterThanOrEqual(3);
  });

  it("changes that never pause reload within the provider's maximum wait when it has one", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = countingProvider(50, 1000);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const t0 = performance.now();
    // A change every 40 ms for 2.4 s: a quiet period of 50 ms never comes.
    for (let i = 0; i < 60; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(40);
    }
    const reloads = provider.readAt.slice(1).map((t) => t - t0);
    expect(reloads[0]).toBe(1000);
    expect(reloads.length).toBeGreaterThanOrEqual(2);
  });

  it('the file provider settles for 15 ms and waits at most 1 s', () => {
    const files = new FileProvider({ paths: ['.'] });
    expect([files.settleMs, files.maxWaitMs]).toEqual([15, 1000]);
  });
});
