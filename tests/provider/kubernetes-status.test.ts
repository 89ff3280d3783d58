// The status the Kubernetes provider writes: what it merges into the live object, and what it
// leaves alone (the API server round trip is in tests/e2e/kubernetes.test.ts).
import { describe, expect, it } from 'vitest';
import { statusFor, stampConditions } from '../../extproc/src/provider/kubernetes/status-writer.js';
import type { Condition, ObjectStatusBody } from '../../extproc/src/translate/status.js';
import { canonical } from '../support/canonical-json.js';

const OURS = 'steadfast.dev/gateway-controller';
const NOW = '2026-11-25T12:00:00.000Z';
const EARLIER = '2026-11-01T00:00:00Z';
const owns = { ownsGateway: (_ns: string, name: string) => name === 'gw' };

const accepted = (status: 'True' | 'False', gen?: number): Condition => ({
  type: 'Accepted',
  status,
  reason: status === 'True' ? 'Accepted' : 'NotAllowedByListeners',
  message: status === 'True' ? 'accepted' : 'no listener allows it',
  ...(gen !== undefined ? { observedGeneration: gen } : {}),
});

const ref = (name: string) => ({
  group: 'gateway.networking.k8s.io',
  kind: 'Gateway',
  namespace: 'default',
  name,
});

describe('stampConditions', () => {
  it('keeps lastTransitionTime while a condition keeps its status, and sets it when the status changes', () => {
    const live = [{ type: 'Accepted', status: 'True', lastTransitionTime: EARLIER }];
    expect(stampConditions([accepted('True')], live, 3, NOW)[0]).toMatchObject({
      lastTransitionTime: EARLIER,
      observedGeneration: 3,
    });
    expect(stampConditions([accepted('False')], live, 3, NOW)[0]).toMatchObject({ lastTransitionTime: NOW });
  });

  it("takes the compiler's observedGeneration over the object's", () => {
    expect(stampConditions([accepted('True', 2)], undefined, 5, NOW)[0]?.observedGeneration).toBe(2);
  });

  it('cuts a message to the 32768 characters the API allows', () => {
    const long = { ...accepted('True'), message: 'x'.repeat(40_000) };
    expect(String(stampConditions([long], undefined, 1, NOW)[0]?.message)).toHaveLength(32_768);
  });
});

describe('statusFor a route', () => {
  const theirs = {
    parentRef: ref('other-gw'),
    controllerName: 'example.com/other',
    conditions: [
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'x', lastTransitionTime: EARLIER },
    ],
  };
  const live = (parents: unknown[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'default', generation: 4 },
    status: { parents },
  });
  const desired = (...names: string[]): ObjectStatusBody => ({
    parents: names.map((n) => ({
      parentRef: ref(n),
      controllerName: OURS,
      conditions: [accepted('True', 4)],
    })),
  });

  it("adds its entry beside another controller's, which it keeps as it is", () => {
    const next = statusFor('route', live([theirs]), desired('gw'), owns, NOW) as { parents: unknown[] };
    expect(next.parents).toEqual([
      theirs,
      {
        parentRef: ref('gw'),
        controllerName: OURS,
        conditions: [{ ...accepted('True', 4), lastTransitionTime: NOW }],
      },
    ]);
  });

  it('writes no entry for a Gateway it does not own, even when the compiler had one', () => {
    expect(statusFor('route', live([theirs]), desired('other-gw'), owns, NOW)).toBeUndefined();
  });

  it('removes its entry when the route no longer attaches to its Gateway', () => {
    const ours = { parentRef: ref('gw'), controllerName: OURS, conditions: [] };
    const next = statusFor('route', live([theirs, ours]), desired(), owns, NOW) as { parents: unknown[] };
    expect(next.parents).toEqual([theirs]);
  });

  it("writes no entry for a parent that is not a Gateway (a mesh route's Service)", () => {
    const service = { group: '', kind: 'Service', namespace: 'default', name: 'svc' };
    const desiredService: ObjectStatusBody = {
      parents: [{ parentRef: service, controllerName: OURS, conditions: [accepted('False', 4)] }],
    };
    expect(statusFor('route', live([theirs]), desiredService, owns, NOW)).toBeUndefined();
  });

  it('writes nothing when the API server returns the same status with its keys in another order', () => {
    const first = statusFor('route', live([]), desired('gw'), owns, NOW) as { parents: unknown[] };
    const reordered = JSON.parse(canonical(first.parents)) as unknown[];
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(first.parents));
    expect(statusFor('route', live(reordered), desired('gw'), owns, NOW)).toBeUndefined();
  });

  it('keeps a policy within the 16 ancestors the CRD allows, its problems first', () => {
    const others = Array.from({ length: 14 }, (_, i) => ({
      ancestorRef: ref(`theirs-${i}`),
      controllerName: 'example.com/other',
      conditions: [],
    }));
    const mine: ObjectStatusBody = {
      ancestors: ['gw', 'gw', 'gw'].map((n, i) => ({
        ancestorRef: { ...ref(n), sectionName: `l${i}` },
        controllerName: OURS,
        conditions: [accepted(i === 2 ? 'False' : 'True', 1)],
      })),
    };
    const policy = {
      metadata: { name: 'p', namespace: 'default', generation: 1 },
      status: { ancestors: others },
    };
    const next = statusFor('policy', policy, mine, owns, NOW) as {
      ancestors: { controllerName: string; conditions: { status: string }[] }[];
    };
    expect(next.ancestors).toHaveLength(16);
    const ours = next.ancestors.filter((a) => a.controllerName === OURS);
    expect(ours).toHaveLength(2);
    expect(ours[0]?.conditions[0]?.status).toBe('False');
  });

  it('writes nothing when the status is already what it computes', () => {
    const first = statusFor('route', live([]), desired('gw'), owns, NOW) as { parents: unknown[] };
    expect(
      statusFor('route', live(first.parents), desired('gw'), owns, '2030-01-01T00:00:00Z'),
    ).toBeUndefined();
  });
});

describe('statusFor a Gateway', () => {
  it('replaces conditions and listeners, keeping other status fields and unchanged transition times', () => {
    const live = {
      metadata: { name: 'gw', namespace: 'default', generation: 2 },
      status: {
        addresses: [{ type: 'IPAddress', value: '10.0.0.1' }],
        conditions: [{ type: 'Accepted', status: 'True', lastTransitionTime: EARLIER }],
        listeners: [
          {
            name: 'http',
            conditions: [{ type: 'Programmed', status: 'False', lastTransitionTime: EARLIER }],
          },
        ],
      },
    };
    const desired: ObjectStatusBody = {
      conditions: [accepted('True', 2)],
      listeners: [
        {
          name: 'http',
          supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
          attachedRoutes: 3,
          conditions: [{ type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' }],
        },
      ],
    };
    const next = statusFor('gateway', live, desired, owns, NOW) as {
      addresses: unknown;
      conditions: { lastTransitionTime: string }[];
      listeners: {
        attachedRoutes: number;
        conditions: { lastTransitionTime: string; observedGeneration: number }[];
      }[];
    };
    expect(next.addresses).toEqual(live.status.addresses);
    expect(next.conditions[0]?.lastTransitionTime).toBe(EARLIER);
    expect(next.listeners[0]?.attachedRoutes).toBe(3);
    expect(next.listeners[0]?.conditions[0]).toMatchObject({
      lastTransitionTime: NOW,
      observedGeneration: 2,
    });
  });
});
