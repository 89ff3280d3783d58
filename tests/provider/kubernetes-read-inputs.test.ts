// What the Kubernetes provider hands the compiler per read: each object's input is made once
// per object the watch delivered, not once per read, and its version moves only when what the
// compiler reads moves (a status write keeps it). A Secret a listener names that is of another
// type than kubernetes.io/tls is handed over as one input while its type holds.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONTROLLER_NAME } from '../../extproc/src/gatewayapi/codes.js';
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

/** An API server of one Gateway of steadfast's whose listener names Secret default/not-tls, of type `secretType.current`. */
function gatewayClient(secretType: { current: string }) {
  const lists: Record<string, unknown[]> = {
    '/apis/gateway.networking.k8s.io/v1/gatewayclasses': [
      { metadata: { name: 'sf', uid: 'gc' }, spec: { controllerName: CONTROLLER_NAME } },
    ],
    '/apis/gateway.networking.k8s.io/v1/gateways': [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'default', uid: 'gw' },
        spec: {
          gatewayClassName: 'sf',
          listeners: [
            { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'not-tls' }] } },
          ],
        },
      },
    ],
  };
  const gets: string[] = [];
  const client = {
    server: 'https://fake',
    call(_method: string, path: string) {
      if (path === '/api/v1/namespaces/default/secrets/not-tls') {
        gets.push(path);
        return Promise.resolve({ type: secretType.current });
      }
      const items = lists[path.split('?')[0] as string] ?? [];
      return Promise.resolve({ items, metadata: { resourceVersion: '1' } });
    },
    watch() {
      return { done: new Promise<void>(() => {}), abort: () => {} };
    },
    close: () => undefined,
  };
  return { client: client as unknown as KubeClient, gets };
}

const routeInputs = (objects: readonly ObjectInput[]) =>
  objects.filter((o) => (o.body as { kind?: string }).kind === 'HTTPRoute');

describe('the Kubernetes provider read', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

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

      // Deleted and made again: a new input with a new version.
      emit({ type: 'DELETED', object: route(1, '/edited') });
      expect(routeInputs((await provider.read()).objects)).toHaveLength(2);
      emit({ type: 'ADDED', object: route(1, '/edited') });
      const remade = routeInputs((await provider.read()).objects);
      expect(remade[2]).not.toBe(written[1]);
      expect(remade[2]?.version).not.toBe(written[1]?.version);
    } finally {
      await provider.close();
    }
  });

  it("holds an object without kubectl's last-applied copy of it, other annotations kept", async () => {
    const { client, emit } = fakeClient();
    const provider = new KubernetesProvider({ client, writeStatus: false });
    const applied = (path: string, annotations: Record<string, string>) => {
      const r = route(1, path);
      return { ...r, metadata: { ...r.metadata, annotations } };
    };
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
    try {
      await provider.read();
      emit({
        type: 'MODIFIED',
        object: applied('/a', { [lastApplied]: '{"kind":"HTTPRoute"}', team: 'shop' }),
      });
      const [, kept] = routeInputs((await provider.read()).objects);
      expect((kept?.body as { metadata: unknown }).metadata).toMatchObject({ annotations: { team: 'shop' } });
      expect(JSON.stringify(kept?.body)).not.toContain(lastApplied);

      // Only the copy changes: nothing the compiler reads moved, so the version holds.
      emit({
        type: 'MODIFIED',
        object: applied('/a', { [lastApplied]: '{"kind":"HTTPRoute","x":1}', team: 'shop' }),
      });
      const [, again] = routeInputs((await provider.read()).objects);
      expect(again?.version).toBe(kept?.version);

      // The copy alone: no annotations left.
      emit({ type: 'MODIFIED', object: applied('/b', { [lastApplied]: '{}' }) });
      const [, alone] = routeInputs((await provider.read()).objects);
      expect((alone?.body as { metadata: object }).metadata).not.toHaveProperty('annotations');
    } finally {
      await provider.close();
    }
  });

  it('hands over one input for a Secret of another type a listener names, while its type holds', async () => {
    const secretType = { current: 'Opaque' };
    const { client, gets } = gatewayClient(secretType);
    const provider = new KubernetesProvider({ client, writeStatus: false });
    const secrets = (objects: readonly ObjectInput[]) =>
      objects.filter((o) => (o.body as { kind?: string }).kind === 'Secret');
    const changed: string[] = [];
    provider.watch((what) => changed.push(what));
    try {
      const [first] = secrets((await provider.read()).objects);
      expect(first?.body).toMatchObject({
        metadata: { namespace: 'default', name: 'not-tls' },
        type: 'Opaque',
      });
      expect(secrets((await provider.read()).objects)).toHaveLength(1);
      expect(secrets((await provider.read()).objects)[0]).toBe(first);
      expect(gets).toHaveLength(1);
      changed.length = 0;

      // Its type asked again once the answer is old (30 s): the same type keeps the input.
      const now = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(now + 31_000);
      await provider.read();
      await vi.waitFor(() => expect(gets).toHaveLength(2));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(secrets((await provider.read()).objects)[0]).toBe(first);
      expect(changed).toEqual([]);

      // Another type: a change, and a new input saying it.
      secretType.current = 'kubernetes.io/dockerconfigjson';
      vi.spyOn(Date, 'now').mockReturnValue(now + 62_000);
      await provider.read();
      await vi.waitFor(() => expect(changed).toEqual(['Secret default/not-tls']));
      const [retyped] = secrets((await provider.read()).objects);
      expect(retyped).not.toBe(first);
      expect(retyped?.body).toMatchObject({ type: 'kubernetes.io/dockerconfigjson' });
    } finally {
      await provider.close();
    }
  });
});
