// What the Kubernetes provider hands the compiler per read: each object's input is made once
// per object the watch delivered, not once per read, and its version moves only when what the
// compiler reads moves (a status write keeps it).
import { describe, expect, it } from 'vitest';
import type { ObjectInput } from '../../extproc/src/gatewayapi/parse.js';
import type { KubeClient, WatchEvent } from '../../extproc/src/provider/kubernetes/client.js';
import { KubernetesProvider } from '../../extproc/src/provider/kubernetes/provider.js';

const route = (i: number, path: string, status?: unknown) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: `route-${i}`, namespace: 'default', uid: `uid-${i}`, resourceVersion: `${i}${path}` },
  spec: { rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }] }] },
  ...(status !== undefined ? { status } : {}),
});

/** An API server of three HTTPRoutes whose HTTPRoute watch the test drives. */
function fakeClient() {
  let emit: ((e: WatchEvent) => void) | undefined;
  const client = {
    server: 'https://fake',
    call(_method: string, path: string) {
      const items = path.startsWith('/apis/gateway.networking.k8s.io/v1/httproutes')
        ? [0, 1, 2].map((i) => route(i, `/r/${i}`))
        : [];
      return Promise.resolve({ items, metadata: { resourceVersion: '1' } });
    },
    watch(path: string, _rv: string, onEvent: (e: WatchEvent) => void) {
      if (path.startsWith('/apis/gateway.networking.k8s.io/v1/httproutes')) emit = onEvent;
      return { done: new Promise<void>(() => {}), abort: () => {} };
    },
    close: () => undefined,
  };
  return { client: client as unknown as KubeClient, emit: (e: WatchEvent) => emit?.(e) };
}

const routeInputs = (objects: readonly ObjectInput[]) =>
  objects.filter((o) => (o.body as { kind?: string }).kind === 'HTTPRoute');

describe('the Kubernetes provider read', () => {
  it('hands over the same input for an object it still holds, and a new one with a new version for a changed one', async () => {
    const { client, emit } = fakeClient();
    const provider = new KubernetesProvider({ client, writeStatus: false });
    try {
      const first = routeInputs((await provider.read()).objects);
      expect(first).toHaveLength(3);
      const again = routeInputs((await provider.read()).objects);
      for (const [i, input] of again.entries()) expect(input).toBe(first[i]);

      emit({ type: 'MODIFIED', object: route(1, '/edited') });
      const edited = routeInputs((await provider.read()).objects);
      expect(edited[0]).toBe(first[0]);
      expect(edited[2]).toBe(first[2]);
      expect(edited[1]).not.toBe(first[1]);
      expect(edited[1]?.version).not.toBe(first[1]?.version);
      expect(edited[1]?.version).toMatch(/^HTTPRoute\/uid-1@\d+$/);

      // Only its status written: a new object from the watch, the same version.
      emit({ type: 'MODIFIED', object: route(1, '/edited', { parents: [] }) });
      const written = routeInputs((await provider.read()).objects);
      expect(written[1]?.body).not.toBe(edited[1]?.body);
      expect(written[1]?.version).toBe(edited[1]?.version);
      // The compiler reads no status: it is not handed over.
      expect(written[1]?.body).not.toHaveProperty('status');
      expect(written[1]?.body).toEqual({ ...route(1, '/edited'), metadata: expect.anything() as unknown });
    } finally {
      await provider.close();
    }
  });
});
