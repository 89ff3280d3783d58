// A generation re-checks only what may have moved: an object at the resourceVersion it was last
// found in step at, with the same status computed again, is skipped; a new computed status, or
// an object someone else changed, is checked and written as before.
import { describe, expect, it, vi } from 'vitest';
import type { KubeClient } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS } from '../../extproc/src/provider/kubernetes/kinds.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';
import { StatusWriter } from '../../extproc/src/provider/kubernetes/status-writer.js';
import type { ObjectStatus } from '../../extproc/src/translate/status.js';

const CLASS = WATCHED_KINDS.find((k) => k.kind === 'GatewayClass')!;

const desired = (status: 'True' | 'False'): Map<string, ObjectStatus> =>
  new Map([
    [
      'GatewayClass//steadfast',
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name: 'steadfast' },
        errors: [],
        status: { conditions: [{ type: 'Accepted', status, reason: 'Accepted', message: 'accepted' }] },
      },
    ],
  ]);

/** A writer whose API server stores what it is sent, and a watch that hands it back (the echo). */
function cluster() {
  let rv = 1;
  let live: KubeObject = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'steadfast', generation: 1, resourceVersion: String(rv) },
    spec: { controllerName: 'steadfast.dev/gateway-controller' },
  };
  let puts = 0;
  const client = {
    server: 'https://fake',
    async call(method: string, _path: string, body: KubeObject) {
      if (method !== 'PUT') throw new Error(`unexpected ${method}`);
      puts++;
      live = { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } };
      return live;
    },
  } as unknown as KubeClient;
  const writer = new StatusWriter(
    client,
    () => live,
    { ownsGateway: () => true },
    () => {},
  );
  return {
    writer,
    puts: () => puts,
    live: () => live,
    /** Someone else changes the object: its status cleared, a new resourceVersion. */
    overwrite: () => {
      live = { ...live, status: {}, metadata: { ...live.metadata, resourceVersion: String(++rv) } };
      return live;
    },
  };
}

/** Until the writer has nothing waiting or in flight. */
async function settled(writer: StatusWriter): Promise<void> {
  while (writer.backlog > 0) await new Promise((r) => setImmediate(r));
}

describe('status checks of an object already in step', () => {
  it('writes once, then nothing for the same status, and again for a new one or after someone else wrote', async () => {
    const c = cluster();
    const all = (): [typeof CLASS, KubeObject][] => [[CLASS, c.live()]];
    c.writer.report(desired('True'), all());
    await settled(c.writer);
    expect(c.puts()).toBe(1);
    c.writer.touched(CLASS, c.live());

    c.writer.report(desired('True'), all());
    await settled(c.writer);
    expect(c.puts()).toBe(1);

    c.writer.report(desired('False'), all());
    await settled(c.writer);
    expect(c.puts()).toBe(2);
    expect((c.live().status as { conditions: { status: string }[] }).conditions[0]?.status).toBe('False');

    c.writer.touched(CLASS, c.overwrite());
    await settled(c.writer);
    expect(c.puts()).toBe(3);
    expect((c.live().status as { conditions: { status: string }[] }).conditions[0]?.status).toBe('False');
    await c.writer.close();
  });

  it('says the first failure after a retried object needed no write (a run of failures ended)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let gone = false;
    const live: KubeObject = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'steadfast', generation: 1, resourceVersion: '1' },
      spec: { controllerName: 'steadfast.dev/gateway-controller' },
    };
    const client = {
      server: 'https://fake',
      call: () => Promise.reject(new Error('API server away')),
    } as unknown as KubeClient;
    const logs: string[] = [];
    const writer = new StatusWriter(
      client,
      () => (gone ? undefined : live),
      { ownsGateway: () => true },
      (l) => logs.push(l),
    );
    const said = () => logs.filter((l) => l.includes('not written')).length;
    /** The rejected write's handlers run within a few turns of the event loop. */
    const turns = async (until: () => boolean) => {
      for (let i = 0; i < 50 && !until(); i++) await new Promise((r) => setImmediate(r));
    };
    try {
      writer.report(desired('True'), [[CLASS, live]]);
      await turns(() => said() === 1);
      expect(said()).toBe(1);

      // Retried after its back-off, the object is gone: checked, nothing to write.
      gone = true;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(writer.backlog).toBe(0);

      // Back, and the API server still refuses: a new run of failures, said at its first.
      gone = false;
      writer.report(desired('True'), [[CLASS, live]]);
      await turns(() => said() === 2);
      expect(said()).toBe(2);
    } finally {
      await writer.close();
      vi.useRealTimers();
    }
  });

  it('knows the version its own write gave an object (its echo), and no other', async () => {
    const c = cluster();
    const before = c.live();
    c.writer.report(desired('True'), [[CLASS, before]]);
    await settled(c.writer);
    expect(c.writer.wrote(CLASS, c.live())).toBe(true);
    expect(c.writer.wrote(CLASS, before)).toBe(false);
    expect(c.writer.wrote(CLASS, c.overwrite())).toBe(false);
    await c.writer.close();
  });
});
