// parentRef ports: upstream's HTTPRouteListenerPortMatching (routes name their listeners by
// port; one group per port, as each port is an Envoy listener of its own) and
// HTTPRouteInvalidParentRefNotMatchingListenerPort (a port no listener has: not accepted,
// and the Gateway counts no route).
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const GATEWAY = 'httproute-listener-port-matching';
const FEATURES = ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'];

function reaches(host: string, backend: string): ConformanceCase {
  return { request: { host, path: '/' }, forwarded: { backend, path: '/', host } };
}

/** One port's group: its Envoy listener, and the cases sent to it. */
function onPort(port: number, envoyListener: string, cases: ConformanceCase[]): ConformanceTest {
  return {
    shortName: 'HTTPRouteListenerPortMatching',
    group: `port-${port}`,
    features: FEATURES,
    manifests: ['httproute-listener-port-matching.yaml'],
    gateway: GATEWAY,
    envoyListener,
    ports: [port],
    cases,
  };
}

const NOT_MATCHING = 'not-matching-listener-port';

export const LISTENER_PORT_TESTS: readonly ConformanceTest[] = [
  onPort(8391, `gateway/default/${GATEWAY}/listener/listener-1`, [
    routeAcceptedAndResolved('HTTPRoute', 'port-matching-backend-v1', GATEWAY),
    reaches('foo.com', 'infra-backend-v1'),
  ]),
  onPort(8392, 'port/8392', [
    routeAcceptedAndResolved('HTTPRoute', 'port-matching-backend-v2', GATEWAY),
    reaches('foo.com:8392', 'infra-backend-v2'),
    reaches('bar.com:8392', 'infra-backend-v2'),
  ]),
  onPort(8393, 'port/8393', [
    routeAcceptedAndResolved('HTTPRoute', 'port-matching-backend-v3', GATEWAY, 'listener-4'),
    reaches('foo.com:8393', 'infra-backend-v3'),
    { request: { host: 'bar.com:8393', path: '/' }, response: { statuses: [404] } },
  ]),
  {
    shortName: 'HTTPRouteInvalidParentRefNotMatchingListenerPort',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteDestinationPortMatching'],
    manifests: ['httproute-invalid-parentref-not-matching-listener-port.yaml'],
    ports: [8394],
    cases: [
      {
        status: {
          kind: 'HTTPRoute',
          name: 'httproute-listener-not-matching-route-port',
          parents: [
            {
              gateway: NOT_MATCHING,
              conditions: [
                { type: 'Accepted', status: 'False', reason: 'NoMatchingParent' },
                { type: 'ResolvedRefs', status: 'True' },
              ],
            },
          ],
        },
      },
      {
        status: {
          kind: 'Gateway',
          name: NOT_MATCHING,
          listeners: [{ name: 'http', supportedKinds: ['HTTPRoute'], attachedRoutes: 0, conditions: [] }],
        },
      },
    ],
  },
];
