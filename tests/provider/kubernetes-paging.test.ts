// The Kubernetes provider lists a kind a page at a time (limit/continue), so a large cluster's
// list is many bounded answers; a continue token the server has forgotten starts it over.
import { describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS } from '../../extproc/src/provider/kubernetes/kinds.js';
import { LIST_PAGE_SIZE, Reflector } from '../../extproc/src/provider/kubernetes/reflector.js';

const SERVICE = WATCHED_KINDS.find((k) => k.kind === 'Service');
const services = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ metadata: { namespace: 'default', name: `svc-${from + i}` } }));

/** An API server of 1,200 Services in pages; `forget` refuses the first continue token once. */
function fakeClient(forget: boolean) {
  const asked: string[] = [];
  let forgotten = !forget;
  const client = {
    server: 'https://fake',
    async call(_method: string, path: string) {
      asked.push(path);
      const url = new URL(path, 'https://fake');
      expect(url.searchParams.get('limit')).toBe(String(LIST_PAGE_SIZE));
      const from = Number(url.searchParams.get('continue') ?? '0');
      if (from > 0 && !forgotten) {
        forgotten = true;
        throw new KubeApiError(410, 'Expired', 'the continue token has expired');
      }
      const to = Math.min(1200, from + LIST_PAGE_SIZE);
      return {
        items: services(from, to - from),
        metadata: { resourceVersion: '42', ...(to < 1200 ? { continue: String(to) } : {}) },
      };
    },
    watch: () => ({ done: new Promise<void>(() => {}), abort: () => {} }),
  };
  return { client: client as unknown as KubeClient, asked };
}

describe('paged lists', () => {
  it('reads every page of a kind before it watches', async () => {
    const { client, asked } = fakeClient(false);
    const r = new Reflector(client, SERVICE!, '/api/v1/services', { changed: () => {}, log: () => {} });
    await r.start();
    r.stop();
    expect(r.objects.size).toBe(1200);
    expect(asked).toEqual([
      `/api/v1/services?limit=${LIST_PAGE_SIZE}`,
      `/api/v1/services?limit=${LIST_PAGE_SIZE}&continue=500`,
      `/api/v1/services?limit=${LIST_PAGE_SIZE}&continue=1000`,
    ]);
  });

  it('starts the list over when the server has forgotten its continue token', async () => {
    const { client, asked } = fakeClient(true);
    const r = new Reflector(client, SERVICE!, '/api/v1/services', { changed: () => {}, log: () => {} });
    await r.start();
    r.stop();
    expect(r.objects.size).toBe(1200);
    expect(asked).toHaveLength(5);
    expect(asked[2]).toBe(`/api/v1/services?limit=${LIST_PAGE_SIZE}`);
  });
});
