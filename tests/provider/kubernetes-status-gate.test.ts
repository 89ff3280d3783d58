// The status writer asks its gate (the Lease) before every write: a replica that does not hold
// the Lease, or whose renew deadline has passed, sends nothing; one that takes the Lease checks
// every object again (so what a generation computed while it did not hold it is written then);
// a write's request may not outlast what is left of the deadline.
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
  const bodies: KubeObject[] = [];
  const client = {
    server: 'https://fake',
    async call(method: string, path: string, body: unknown, timeoutMs?: number | (() => number)) {
      // As the client does: a timeout given as a function is asked when the request goes.
      if (method === 'PUT') {
        puts.push({ path, timeoutMs: typeof timeoutMs === 'function' ? timeoutMs() : timeoutMs });
        bodies.push(body as KubeObject);
      }
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
  return { writer, puts, bodies };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
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

  it('writes, once it holds the Lease again, the status a generation computed while it did not', async () => {
    const gate = { holds: true, remainingMs: 4000 };
    const { writer, bodies } = writerWith(gate);
    writer.report(desired, [[CLASS, live]]);
    await until(() => bodies.length === 1);
    // The Lease lost; meanwhile a generation says the class is not accepted any more.
    gate.holds = false;
    writer.follow();
    const refused = new Map(desired);
    const entry = desired.get('GatewayClass//steadfast') as ObjectStatus;
    refused.set('GatewayClass//steadfast', {
      ...entry,
      status: {
        conditions: [{ type: 'Accepted', status: 'False', reason: 'InvalidParameters', message: 'no' }],
      },
    });
    writer.report(refused, [[CLASS, live]]);
    await new Promise((r) => setImmediate(r));
    expect(bodies).toHaveLength(1);
    gate.holds = true;
    writer.lead([[CLASS, live]]);
    await writer.close();
    expect(bodies).toHaveLength(2);
    const conditions = (bodies[1]?.status as { conditions: { status: string }[] }).conditions;
    expect(conditions.map((c) => c.status)).toEqual(['False']);
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
