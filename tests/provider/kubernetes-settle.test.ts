// How soon a change from the API server is compiled and served: a watch event is a whole
// object, so the Kubernetes provider's settle is short, long enough for the objects of one apply
// to come together, and capped; a change is read and compiled at once while the settle runs, and
// only its swap waits. Timed with fake timers: what is asserted is the order of events (changes,
// reads, compiles, swaps), never wall-clock time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigStore } from '../../extproc/src/pipeline/config-store.js';
import { type Snapshot, compileConfig } from '../../extproc/src/pipeline/snapshot.js';
import type { KubeClient } from '../../extproc/src/provider/kubernetes/client.js';
import { KubernetesProvider } from '../../extproc/src/provider/kubernetes/provider.js';
import type { ProvidedConfig } from '../../extproc/src/provider/provider.js';
import { settleProbe } from '../support/settle-probe.js';

const route = (n: number) => `
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
  rules: [{ matches: [{ path: { type: Exact, value: /r${n} } }] }]
`;

/** The settle the Kubernetes provider asks for (nothing is started: the client is never used). */
const kube = new KubernetesProvider({ client: { server: 'https://fake' } as unknown as KubeClient });

/** A compile that takes `ms` of fake time, after the first (the store's load before the test's changes). */
function slowCompile(ms: number): (provided: ProvidedConfig) => Promise<Snapshot> {
  let first = true;
  return async (provided) => {
    if (!first) await new Promise((r) => setTimeout(r, ms));
    first = false;
    return compileConfig(provided);
  };
}

/** When the store swapped in each generation from now on (performance.now()). */
function swapTimes(s: ConfigStore): number[] {
  const at: number[] = [];
  s.on('swap', () => at.push(performance.now()));
  return at;
}

let store: ConfigStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
  vi.useRealTimers();
});

describe('the Kubernetes provider settles a change briefly', () => {
  it('asks for 15 ms of quiet, at most 50 ms from the first change, and reads early', () => {
    expect([kube.settleMs, kube.maxWaitMs, kube.readsEarly]).toEqual([15, 50, true]);
  });

  it('reads a lone change that finds the store idle at once and swaps it in 15 ms after it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const swaps = swapTimes(store);
    const t0 = performance.now();
    provider.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(provider.readAt.slice(1).map((t) => t - t0)).toEqual([0]);
    await vi.advanceTimersByTimeAsync(14);
    expect(store.generation).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.generation).toBe(2);
    expect(swaps.map((t) => t - t0)).toEqual([15]);
    expect(provider.readAt).toHaveLength(2);
  });

  it('swaps a lone change in as its compile ends when the compile outlasts the settle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    // 25 ms: about a compile at 10,000 routes, the thread's crossing included.
    store = new ConfigStore({ provider, compile: slowCompile(25) });
    await store.load();
    store.watch();
    const swaps = swapTimes(store);
    const t0 = performance.now();
    provider.change();
    await vi.advanceTimersByTimeAsync(100);
    // Not 15 + 25: the settle ran while it compiled.
    expect(swaps.map((t) => t - t0)).toEqual([25]);
    expect(provider.readAt).toHaveLength(2);
  });

  it("gathers one apply's objects, sent one after another, into one generation", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const reports: number[] = [];
    provider.report = (status) => reports.push(status.generation);
    const swaps = swapTimes(store);
    const t0 = performance.now();
    // Five objects 8 ms apart (each a request answered before the next), two events in the last tick.
    provider.change();
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(8);
      provider.change();
    }
    provider.change();
    await vi.advanceTimersByTimeAsync(1000);
    // Read at the first change (that compile discarded by the second, never served), then once
    // 15 ms after the last: one swap, one status report, of what the last read found.
    expect(provider.readAt.slice(1).map((t) => t - t0)).toEqual([0, 32 + 15]);
    expect(swaps.map((t) => t - t0)).toEqual([32 + 15]);
    expect(reports).toEqual([2]);
    expect(
      store.snapshot.table.routes.flatMap((r) => r.rules.flatMap((x) => x.matches.map((m) => m.path.value))),
    ).toEqual(['/r3']);
  });

  it('never reports a compile begun early that a change discarded, even one that failed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    // The early read (the second) finds a broken object; the settle's read finds it fixed.
    const provider = settleProbe(kube, (n) => (n === 2 ? 'kind: [' : route(n)));
    store = new ConfigStore({ provider });
    const failures: string[] = [];
    store.on('reload-failed', (f) => failures.push(f.message));
    await store.load();
    store.watch();
    provider.change();
    await vi.advanceTimersByTimeAsync(8);
    provider.change();
    await vi.advanceTimersByTimeAsync(100);
    expect(provider.readAt).toHaveLength(3);
    expect(failures).toEqual([]);
    expect(store.generation).toBe(2);
  });

  it('swaps nothing in once closed while a compile begun early waits for the settle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    provider.change();
    await vi.advanceTimersByTimeAsync(5);
    expect(provider.readAt).toHaveLength(2);
    store.close();
    await vi.advanceTimersByTimeAsync(100);
    expect(store.generation).toBe(1);
  });

  it('is not postponed past 50 ms by changes that keep coming', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    store = new ConfigStore({ provider });
    await store.load();
    store.watch();
    const swaps = swapTimes(store);
    const t0 = performance.now();
    // A change every 10 ms for 100 ms: 15 ms of quiet never comes.
    for (let i = 0; i < 10; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(10);
    }
    // The early read at the first change is discarded by the second; the settle reads at 50 ms.
    expect(provider.readAt.slice(1, 3).map((t) => t - t0)).toEqual([0, 50]);
    expect((swaps[0] ?? 0) - t0).toBe(50);
  });

  it('reads once per generation under changes spaced longer than a compile and shorter than the settle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    // A compile of 5 ms, a change every 12 ms for 0.6 s (an EndpointSlice that keeps moving).
    store = new ConfigStore({ provider, compile: slowCompile(5) });
    await store.load();
    store.watch();
    const swaps = swapTimes(store);
    for (let i = 0; i < 50; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(12);
    }
    await vi.advanceTimersByTimeAsync(300);
    // Only the first change, after quiet, is read early (and that read discarded by the next);
    // every other read is a settle's, and each is swapped in.
    expect(swaps.length).toBeGreaterThanOrEqual(10);
    expect(provider.readAt.length - 1).toBe(swaps.length + 1);
  });

  it('puts the changes that come during a compile into one next reload, started when it ends', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    const compiled: number[] = [];
    const compile = slowCompile(50);
    store = new ConfigStore({
      provider,
      compile: async (p) => {
        const s = await compile(p);
        compiled.push(performance.now());
        return s;
      },
    });
    await store.load();
    store.watch();
    const t0 = performance.now();
    provider.change();
    await vi.advanceTimersByTimeAsync(15);
    expect(provider.readAt).toHaveLength(2);
    // A change every 2 ms while that compile runs (read at once: 0 → 50 ms), settled by 48 ms.
    for (let i = 0; i < 10; i++) {
      provider.change();
      await vi.advanceTimersByTimeAsync(2);
    }
    await vi.advanceTimersByTimeAsync(300);
    // Exactly one more reload, as the first compile ended.
    expect(provider.readAt.slice(1).map((t) => t - t0)).toEqual([0, 50]);
    expect(compiled.map((t) => t - t0).slice(1)).toEqual([50, 100]);
    expect(store.generation).toBe(3);
  });

  it('never starves: under changes that never pause, every change is read within 50 ms and one compile', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const provider = settleProbe(kube, route);
    store = new ConfigStore({ provider, compile: slowCompile(50) });
    await store.load();
    store.watch();
    const changes: number[] = [];
    // A change every millisecond for 1 s.
    for (let i = 0; i < 1000; i++) {
      changes.push(performance.now());
      provider.change();
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(300);
    const reads = provider.readAt.slice(1);
    for (const c of changes) {
      const read = reads.find((r) => r > c);
      expect(read).toBeDefined();
      expect((read ?? 0) - c).toBeLessThanOrEqual(50 + 50);
    }
  });
});
