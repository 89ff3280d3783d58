// Gateway and listener status: upstream's Gateway* tests that read only status, each subtest
// one case (what GatewayStatusMustHaveListeners or GatewayMustHaveCondition checks).
import type { ConditionExpectation, ConformanceTest, StatusCase } from './conformance-case.js';

/** A Gateway with one listener, and what its status must say of it. */
function listenerStatus(
  gateway: string,
  listener: string,
  supportedKinds: readonly string[],
  attachedRoutes: number,
  ...conditions: ConditionExpectation[]
): StatusCase {
  return {
    status: {
      kind: 'Gateway',
      name: gateway,
      listeners: [{ name: listener, supportedKinds, attachedRoutes, conditions }],
    },
  };
}

const INVALID_ROUTE_KINDS: ConditionExpectation = {
  type: 'ResolvedRefs',
  status: 'False',
  reason: 'InvalidRouteKinds',
};

export const GATEWAY_STATUS_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GatewayInvalidRouteKind',
    features: ['Gateway'],
    manifests: ['gateway-invalid-route-kind.yaml'],
    ports: [8181, 8182],
    cases: [
      listenerStatus('gateway-only-invalid-route-kind', 'http', [], 0, INVALID_ROUTE_KINDS),
      listenerStatus(
        'gateway-supported-and-invalid-route-kind',
        'http',
        ['HTTPRoute'],
        0,
        INVALID_ROUTE_KINDS,
      ),
    ],
  },
];
