// Gateway and listener status: upstream's Gateway* tests that read only status, each subtest
// one case (what GatewayStatusMustHaveListeners or GatewayMustHaveCondition checks).
import type {
  ConditionExpectation,
  ConformanceTest,
  ListenerExpectation,
  StatusCase,
} from './conformance-case.js';

/** A Gateway with one listener (`<namespace>/<name>` or a name in `default`), and what its status must say of it. */
function listenerStatus(
  gateway: string,
  listener: string,
  supportedKinds: readonly string[],
  attachedRoutes: number,
  ...conditions: ConditionExpectation[]
): StatusCase {
  const [namespace, name] = gateway.includes('/') ? gateway.split('/') : ['default', gateway];
  return {
    status: {
      kind: 'Gateway',
      name: name as string,
      namespace: namespace as string,
      listeners: [{ name: listener, supportedKinds, attachedRoutes, conditions }],
    },
  };
}

const is = (type: string, status: 'True' | 'False', reason?: string): ConditionExpectation => ({
  type,
  status,
  ...(reason ? { reason } : {}),
});

const HTTP_ROUTE = ['HTTPRoute'];

/** A valid HTTP listener with its references resolved and this many routes attached. */
function acceptedListener(name: string, attachedRoutes: number): ListenerExpectation {
  return {
    name,
    supportedKinds: HTTP_ROUTE,
    attachedRoutes,
    conditions: [is('Accepted', 'True'), is('ResolvedRefs', 'True')],
  };
}
const ATTACHED_NS = 'gateway-with-attached-routes';
const MODIFY_NS = 'gateway-modify-listeners';

/** A listener whose protocol no one serves: not accepted, no kinds, no routes. */
const UNSUPPORTED_LISTENER: ListenerExpectation = {
  name: 'invalid',
  supportedKinds: [],
  attachedRoutes: 0,
  conditions: [is('Accepted', 'False', 'UnsupportedProtocol')],
};

const INVALID_ROUTE_KINDS = is('ResolvedRefs', 'False', 'InvalidRouteKinds');

export const GATEWAY_STATUS_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GatewaySecretReferenceGrantAllInNamespace',
    features: ['Gateway', 'ReferenceGrant'],
    manifests: ['gateway-secret-reference-grant-all-in-namespace.yaml'],
    ports: [9441],
    cases: [
      listenerStatus(
        'secret-grant-all/gateway-secret-reference-grant-all-in-namespace',
        'https',
        HTTP_ROUTE,
        0,
        is('Programmed', 'True', 'Programmed'),
        is('ResolvedRefs', 'True'),
      ),
    ],
  },
  {
    shortName: 'GatewaySecretReferenceGrantSpecific',
    features: ['Gateway', 'ReferenceGrant'],
    manifests: ['gateway-secret-reference-grant-specific.yaml'],
    ports: [9442],
    cases: [
      listenerStatus(
        'secret-grant-specific/gateway-secret-reference-grant-specific',
        'https',
        HTTP_ROUTE,
        0,
        is('Programmed', 'True', 'Programmed'),
        is('ResolvedRefs', 'True'),
      ),
    ],
  },
  {
    shortName: 'GatewaySecretMissingReferenceGrant',
    features: ['Gateway', 'ReferenceGrant'],
    manifests: ['gateway-secret-missing-reference-grant.yaml'],
    ports: [9443],
    cases: [
      listenerStatus(
        'secret-grant-missing/gateway-secret-missing-reference-grant',
        'https',
        HTTP_ROUTE,
        0,
        is('ResolvedRefs', 'False', 'RefNotPermitted'),
      ),
    ],
  },
  {
    shortName: 'GatewaySecretInvalidReferenceGrant',
    features: ['Gateway', 'ReferenceGrant'],
    manifests: ['gateway-secret-invalid-reference-grant.yaml'],
    ports: [9444],
    cases: [
      listenerStatus(
        'secret-grant-invalid/gateway-secret-invalid-reference-grant',
        'https',
        HTTP_ROUTE,
        0,
        is('ResolvedRefs', 'False', 'RefNotPermitted'),
      ),
    ],
  },
  {
    shortName: 'GatewayInvalidTLSConfiguration',
    features: ['Gateway'],
    manifests: ['gateway-invalid-tls-configuration.yaml'],
    ports: [9445, 9446, 9447, 9448],
    cases: [
      'gateway-certificate-nonexistent-secret',
      'gateway-certificate-unsupported-group',
      'gateway-certificate-unsupported-kind',
      'gateway-certificate-malformed-secret',
    ].map((gw) =>
      listenerStatus(gw, 'https', HTTP_ROUTE, 0, is('ResolvedRefs', 'False', 'InvalidCertificateRef')),
    ),
  },
  {
    shortName: 'GatewayWithAttachedRoutes',
    features: ['Gateway', 'HTTPRoute'],
    manifests: ['gateway-with-attached-routes.yaml'],
    ports: [8281, 8282, 8283],
    cases: [
      listenerStatus(
        `${ATTACHED_NS}/gateway-with-one-attached-route`,
        'http',
        HTTP_ROUTE,
        1,
        is('Accepted', 'True'),
        is('ResolvedRefs', 'True'),
      ),
      listenerStatus(
        `${ATTACHED_NS}/gateway-with-two-attached-routes`,
        'http',
        HTTP_ROUTE,
        2,
        is('Accepted', 'True'),
        is('ResolvedRefs', 'True'),
      ),
      {
        status: {
          kind: 'HTTPRoute',
          name: 'http-route-not-accepted',
          namespace: ATTACHED_NS,
          parents: [
            {
              gateway: 'gateway-with-two-attached-routes',
              conditions: [is('Accepted', 'False', 'NoMatchingListenerHostname')],
            },
          ],
        },
      },
      listenerStatus(
        `${ATTACHED_NS}/unresolved-gateway-with-one-attached-unresolved-route`,
        'tls',
        HTTP_ROUTE,
        1,
        is('Programmed', 'False'),
        is('ResolvedRefs', 'False'),
      ),
      {
        status: {
          kind: 'HTTPRoute',
          name: 'http-route-4',
          namespace: ATTACHED_NS,
          parents: [
            {
              gateway: 'unresolved-gateway-with-one-attached-unresolved-route',
              sectionName: 'tls',
              conditions: [is('ResolvedRefs', 'False')],
            },
          ],
        },
      },
    ],
  },
  {
    shortName: 'GatewayWithAttachedRoutesWithPort8080',
    // Upstream also lists GatewayPort8080; this port binds other ports, so it does not show that feature.
    features: ['Gateway', 'HTTPRoute'],
    manifests: ['gateway-with-attached-routes-with-port-8080.yaml'],
    ports: [8286, 8287],
    cases: [
      {
        status: {
          kind: 'Gateway',
          name: 'gateway-with-two-listeners-and-one-attached-route',
          namespace: ATTACHED_NS,
          listeners: [acceptedListener('http-unattached', 0), acceptedListener('http', 1)],
        },
      },
    ],
  },
  {
    shortName: 'GatewayInvalidParametersRef',
    features: ['Gateway'],
    manifests: ['gateway-invalid-parameters-ref.yaml'],
    ports: [8183],
    cases: [
      {
        status: {
          kind: 'Gateway',
          name: 'gateway-invalid-parameters-ref',
          conditions: [is('Accepted', 'False', 'InvalidParameters')],
        },
      },
    ],
  },
  {
    shortName: 'GatewayModifyListeners',
    features: ['Gateway'],
    manifests: ['gateway-modify-listeners.yaml'],
    ports: [9451, 9452, 8384, 8385],
    cases: [
      {
        apply: { file: 'gateway-modify-listeners.yaml', manifest: 'gateway-modify-listeners-added.yaml' },
        status: {
          kind: 'Gateway',
          name: 'gateway-add-listener',
          namespace: MODIFY_NS,
          listeners: [acceptedListener('https', 1), acceptedListener('http', 1)],
        },
      },
      {
        apply: { file: 'gateway-modify-listeners.yaml', manifest: 'gateway-modify-listeners-removed.yaml' },
        ...listenerStatus(
          `${MODIFY_NS}/gateway-remove-listener`,
          'http',
          HTTP_ROUTE,
          1,
          is('Accepted', 'True'),
          is('ResolvedRefs', 'True'),
        ),
      },
    ],
  },
  {
    shortName: 'GatewayListenerUnsupportedProtocol',
    features: ['Gateway'],
    manifests: ['gateway-invalid-listeners-unsupported-protocol.yaml'],
    ports: [8395],
    cases: [
      {
        status: {
          kind: 'Gateway',
          name: 'gateway-only-unsupported-protocols',
          conditions: [is('Accepted', 'False', 'ListenersNotValid')],
          listeners: [UNSUPPORTED_LISTENER],
        },
      },
      {
        status: {
          kind: 'Gateway',
          name: 'gateway-supported-and-unsupported-protocols',
          conditions: [is('Accepted', 'True', 'ListenersNotValid')],
          listeners: [
            {
              name: 'http',
              supportedKinds: HTTP_ROUTE,
              attachedRoutes: 0,
              conditions: [is('Accepted', 'True', 'Accepted')],
            },
            UNSUPPORTED_LISTENER,
          ],
        },
      },
    ],
  },
  {
    shortName: 'GatewayObservedGenerationBump',
    features: ['Gateway'],
    manifests: ['gateway-observed-generation-bump.yaml'],
    ports: [8396],
    cases: [
      { status: { kind: 'Gateway', name: 'gateway-observed-generation-bump', observedGeneration: 1 } },
      {
        apply: {
          file: 'gateway-observed-generation-bump.yaml',
          manifest: 'gateway-observed-generation-bump-patched.yaml',
        },
        status: { kind: 'Gateway', name: 'gateway-observed-generation-bump', observedGeneration: 2 },
      },
    ],
  },
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
