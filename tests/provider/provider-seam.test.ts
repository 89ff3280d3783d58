// The provider seam: any provider's objects go through the one compiler and the one swap,
// and its status comes back keyed by object, with file:line only where the provider had one.
import { afterEach, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../extproc/src/gatewayapi/diagnostic.js';
import type { ObjectInput } from '../../extproc/src/gatewayapi/parse.js';
import type { ProvidedConfig, Provider, StatusReport } from '../../extproc/src/provider/provider.js';
import { ConfigStore } from '../../extproc/src/pipeline/config-store.js';

const GATEWAY = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'steadfast', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] },
};

const routeObject = (path: string, attempts = 2) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'r', namespace: 'default' },
  spec: {
    parentRefs: [{ name: 'gw' }],
    rules: [{ matches: [{ path: { type: 'Exact', value: path } }], retry: { attempts } }],
  },
});

/** A provider that holds objects in memory, as a cluster watch would. */
class MemoryProvider implements Provider {
  readonly description = 'memory';
  readonly reports: StatusReport[] = [];
  private changed: ((what: string) => void) | undefined;
  constructor(public objects: ObjectInput[]) {}
  async start(): Promise<void> {}
  async read(): Promise<ProvidedConfig> {
    return { documents: [], objects: this.objects, diagnostics: [] };
  }
  watch(changed: (what: string) => void): () => void {
    this.changed = changed;
    return () => (this.changed = undefined);
  }
  report(status: StatusReport): void {
    this.reports.push(status);
  }
  close(): void {}
  set(objects: ObjectInput[]): void {
    this.objects = objects;
    this.changed?.('HTTPRoute default/r');
  }
}

let store: ConfigStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

describe('a provider of objects without files', () => {
  it('compiles them, and receives their status keyed by object', async () => {
    const provider = new MemoryProvider([
      { body: GATEWAY },
      { body: routeObject('/one'), source: { file: 'cluster/r.yaml', line: 7 } },
    ]);
    store = new ConfigStore({ provider, debounceMs: 10 });
    expect(await store.load()).toBe(true);
    expect(store.snapshot.resolver.resolve({ method: 'GET', authority: 'x', path: '/one' })?.token).toMatch(
      /^sf1;id=httproute\/default\/r\/rule\/0;k=h;ra=2/,
    );
    expect(provider.reports).toHaveLength(1);
    const report = provider.reports[0] as StatusReport;
    expect(report.generation).toBe(1);
    expect([...report.objects.keys()]).toEqual(['Gateway/default/gw', 'HTTPRoute/default/r']);
    const gw = report.objects.get('Gateway/default/gw');
    expect(gw?.source).toBeUndefined();
    expect(gw?.status.conditions?.find((c) => c.type === 'Accepted')?.status).toBe('True');
    expect(report.objects.get('HTTPRoute/default/r')?.source).toEqual({ file: 'cluster/r.yaml', line: 7 });
  });

  it('swaps when the provider says its objects changed, and reports the new generation', async () => {
    const provider = new MemoryProvider([{ body: GATEWAY }, { body: routeObject('/one') }]);
    store = new ConfigStore({ provider, debounceMs: 10 });
    await store.load();
    store.watch();
    const swapped = new Promise<number>((resolve) => store?.once('swap', (_s, gen) => resolve(gen)));
    provider.set([{ body: GATEWAY }, { body: routeObject('/one', 4) }]);
    expect(await swapped).toBe(2);
    expect(provider.reports.map((r) => r.generation)).toEqual([1, 2]);
    expect(store.snapshot.table.routes[0]?.rules[0]?.token).toContain(';ra=4');
  });

  it('names an object without a location by kind and name in its errors', async () => {
    const provider = new MemoryProvider([{ body: GATEWAY }, { body: routeObject('/one', 0) }]);
    store = new ConfigStore({ provider });
    await store.load();
    const error = store.snapshot.errors.find((d) => d.object?.kind === 'HTTPRoute');
    expect(error).toBeDefined();
    expect(formatDiagnostic(error!)).toMatch(/^HTTPRoute default\/r spec\.rules\[0\]\.retry\.attempts: /);
  });
});
