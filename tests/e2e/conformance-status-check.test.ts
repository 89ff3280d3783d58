// The conformance tables' status comparison (conformance/status-check.ts) finds what differs,
// as upstream's helpers would, and passes what matches.
import { describe, expect, it } from 'vitest';
import type { ObjectStatus } from '../../extproc/src/translate/status.js';
import { statusProblems } from './conformance/status-check.js';

const gateway: ObjectStatus = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { namespace: 'default', name: 'gw' },
  errors: [],
  status: {
    conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted' }],
    listeners: [
      {
        name: 'https',
        supportedKinds: [
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
          { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
        ],
        attachedRoutes: 1,
        conditions: [
          { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted', message: 'no grant' },
        ],
      },
    ],
  },
};

describe('conformance status check', () => {
  it('passes a status that has what upstream asks (more kinds, any reason)', () => {
    expect(
      statusProblems(
        {
          kind: 'Gateway',
          name: 'gw',
          conditions: [{ type: 'Accepted', status: 'True' }],
          listeners: [
            {
              name: 'https',
              supportedKinds: ['HTTPRoute'],
              attachedRoutes: 1,
              conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }],
            },
          ],
        },
        [gateway],
      ),
    ).toEqual([]);
  });

  it('names each difference', () => {
    expect(
      statusProblems(
        {
          kind: 'Gateway',
          name: 'gw',
          conditions: [{ type: 'Programmed', status: 'True' }],
          listeners: [
            {
              name: 'https',
              supportedKinds: [],
              attachedRoutes: 0,
              conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidCertificateRef' }],
            },
          ],
        },
        [gateway],
      ),
    ).toEqual([
      'Gateway: no Programmed condition',
      'listener https: supportedKinds HTTPRoute, GRPCRoute, expected none',
      'listener https: attachedRoutes 1, expected 0',
      'listener https: ResolvedRefs is False/RefNotPermitted (no grant), expected False/InvalidCertificateRef',
    ]);
    expect(statusProblems({ kind: 'Gateway', name: 'other' }, [gateway])).toEqual([
      'no status for Gateway default/other',
    ]);
  });
});
