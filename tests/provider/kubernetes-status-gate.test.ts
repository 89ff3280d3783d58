// The status writer asks its gate (the Lease) before every write: a replica that does not hold
// the Lease, or whose renew deadline has passed, sends nothing; one that takes the Lease checks
// every object again; a write's request may not outlast what is left of the deadline.
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../extproc/src/provider/kubernetes/client.js';
import { WATCHED_KINDS } from '../../extproc/src/provider/kubernetes/kinds.js';
import type { KubeObject } from '../../extproc/src/provider/kubernetes/reflector.js';
import { StatusWriter } from '../../extproc/src/provider/kubernetes/status-writer.js';
import type { ObjectStatus } from '../../extproc/src/translate/status.js';

const CLASS = WATCHED_KINDS.find((k) => k.kind === 'GatewayClass')!;
const live: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'steadfast', generation: 1, resourceVersion: '1' },
  spec: { controllerName: 'steadfast.dev/gateway-controller' },
};
const desired = new Map<string, ObjectStatus>([
  [
    'GatewayClass//steadfast',
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'steadfast' },
      errors: [],
      status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted' }] },
    },
  ],
]);

function writerWith(gate: { holds: boolean; remainingMs: number }) {
  const puts: { path: string; timeoutMs: number | undefined }[] = [];
  const client = {
    server: 'https://fake',
    async call(method: string, path: string, _body: unknown, timeoutMs?: number | (() => number)) {
      // As the client does: a timeout given as a function is asked when the request goes.
      if (method === 'PUT')
        puts.push({ path, timeoutMs: typeof timeoutMs === 'function' ? timeoutMs() : timeoutMs });
      return { metadata: { resourceVersion: String(puts.length + 1) } };
    },
  } as unknown as KubeClient;
  const writer = new StatusWriter(
    client,
    () => live,
    { ownsGateway: () => true },
    () => {},
    { holds: () => gate.holds, remainingMs: () => (gate.holds ? gate.remainingMs : 0) },
  );
  return { writer, puts };
}

describe('status writes and the Lease', () => {
  it('writes nothing while the replica does not hold the Lease, and everything once it takes it', async () => {
    const gate = { holds: false, remainingMs: 0 };
    const { writer, puts } = writerWith(gate);
    writer.report(desired, [[CLASS, live]]);
    writer.touched(CLASS, { ...live, metadata: { ...live.metadata, resourceVersion: '2' } });
    // The gate is asked before a write is started: nothing is under way to wait for.
    expect(puts).toEqual([]);

    gate.holds = true;
    gate.remainingMs = 4000;
    writer.lead([[CLASS, live]]);
    await writer.close();
    expect(puts).toEqual([
      { path: '/apis/gateway.networking.k8s.io/v1/gatewayclasses/steadfast/status', timeoutMs: 4000 },
    ]);
  });

  it('drops what was waiting when the Lease is lost', async () => {
    const gate = { holds: true, remainingMs: 4000 };
    const { writer, puts } = writerWith(gate);
    gate.holds = false;
    writer.report(desired, [[CLASS, live]]);
    writer.follow();
    await writer.close();
    expect(puts).toEqual([]);
  });
});
