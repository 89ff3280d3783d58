// The watch echo of the provider's own status write: a /status write succeeds only on the version
// it read, so its echo differs from the object before only in status, and the reflector takes it
// without comparing the two (two serializations per written object, 10,000 after a start).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient, WatchEvent } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS } from '../../extproc/src/provider/kubernetes/kinds.js';
import { type KubeObject, Reflector } from '../../extproc/src/provider/kubernetes/reflector.js';

const ROUTE = WATCHED_KINDS.find((k) => k.kind === 'HTTPRoute')!;

const route = (rv: string, path: string, status?: unknown): KubeObject => ({
  apiVersion: ROUTE.apiVersion,
  kind: ROUTE.kind,
  metadata: { namespace: 'default', name: 'r', resourceVersion: rv },
  spec: { rules: [{ matches: [{ path: { type: 'Exact', value: path } }] }] },
  ...(status ? { status } : {}),
});

/** A reflector listing one route at rv 1, its watch events sent by `send`. */
async function reflectorOf(ours: (o: KubeObject) => boolean) {
  let send: (e: WatchEvent) => void = () => {};
  const client = {
    server: 'https://fake',
    call: () => Promise.resolve({ items: [route('1', '/a')], metadata: { resourceVersion: '1' } }),
    watch: (_path: string, _rv: string, onEvent: (e: WatchEvent) => void) => {
      send = onEvent;
      return { done: new Promise<void>(() => {}), abort: () => {} };
    },
  } as unknown as KubeClient;
  const changed: string[] = [];
  const r = new Reflector(client, ROUTE, '/routes', {
    changed: (what) => changed.push(what),
    ownStatusWrite: (_k, o) => ours(o),
    log: () => {},
  });
  await r.start();
  return { r, changed, send: (e: WatchEvent) => send(e) };
}

afterEach(() => vi.restoreAllMocks());

describe("the echo of the provider's own status write", () => {
  it('is taken without comparing it with the object before', async () => {
    const { r, changed, send } = await reflectorOf((o) => o.metadata?.resourceVersion === '2');
    const stringify = vi.spyOn(JSON, 'stringify');
    send({ type: 'MODIFIED', object: route('2', '/a', { parents: [] }) });
    expect(stringify).not.toHaveBeenCalled();
    expect(changed).toEqual([]);
    expect(r.objects.get('default/r')?.metadata?.resourceVersion).toBe('2');
    expect(r.readVersion('default/r')).toBe(1);
  });

  it('is the only one: any other version is compared, and a change says so', async () => {
    const { r, changed, send } = await reflectorOf((o) => o.metadata?.resourceVersion === '2');
    send({ type: 'MODIFIED', object: route('2', '/a', { parents: [] }) });
    send({ type: 'MODIFIED', object: route('3', '/b', { parents: [] }) });
    expect(changed).toEqual(['HTTPRoute default/r changed']);
    expect(r.readVersion('default/r')).toBe(2);
  });
});
