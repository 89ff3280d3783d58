// HTTPS listeners sharing a port: upstream's HTTPRouteHTTPSListener (each host reaches its own
// listener's route) and HTTPRouteHTTPSListenerDetectMisdirectedRequests. Four HTTPS
// listeners share a port; a request whose Host belongs to another listener than the one its
// SNI chose is answered 421 (RFC 9110 §15.5.20), one whose Host belongs to the same listener
// is served by that listener's routes or answered 404. Over HTTP/2, as upstream sends them.
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const PATH = '/detect-misdirected-requests';

function served(serverName: string, host: string, backend: string): ConformanceCase {
  return {
    request: { serverName, host, path: PATH, http2: true },
    forwarded: { backend, path: PATH, host },
  };
}

function answered(serverName: string, host: string, status: 404 | 421): ConformanceCase {
  return { request: { serverName, host, path: PATH, http2: true }, response: { statuses: [status] } };
}

export const MISDIRECTED_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteHTTPSListenerDetectMisdirectedRequests',
    features: ['Gateway', 'GatewayHTTPSListenerDetectMisdirectedRequests', 'HTTPRoute'],
    manifests: ['httproute-https-listener-detect-misdirected-requests.yaml'],
    gateway: 'https-listener-detect-misdirected-requests',
    envoyListener: 'port/9450',
    https: true,
    ports: [9450],
    cases: [
      // Upstream first checks each route accepted and resolved on its listener.
      ...[
        'https',
        'https-with-hostname',
        'https-with-wildcard-hostname',
        'https-with-hostname-matching-wildcard',
      ].map((listener, i) =>
        routeAcceptedAndResolved(
          'HTTPRoute',
          `https-listener-detect-misdirected-requests-test-${i + 1}`,
          'https-listener-detect-misdirected-requests',
          listener,
        ),
      ),
      served('example.org', 'example.org', 'infra-backend-v1'),
      answered('example.org', 'second-example.org', 421),
      answered('example.org', 'unknown-example.org', 404),
      served('second-example.org', 'second-example.org', 'infra-backend-v2'),
      answered('second-example.org', 'example.org', 421),
      answered('second-example.org', 'unknown-example.org', 421),
      served('third-example.wildcard.org', 'third-example.wildcard.org', 'infra-backend-v3'),
      served('third-example.wildcard.org', 'fith-example.wildcard.org', 'infra-backend-v3'),
      answered('third-example.wildcard.org', 'fourth-example.wildcard.org', 421),
      answered('third-example.wildcard.org', 'second-example.org', 421),
      answered('third-example.wildcard.org', 'unknown-example.org', 421),
      served('fourth-example.wildcard.org', 'fourth-example.wildcard.org', 'infra-backend-v1'),
      answered('fourth-example.wildcard.org', 'fith-example.wildcard.org', 421),
      served('unknown-example.org', 'example.org', 'infra-backend-v1'),
      answered('unknown-example.org', 'unknown-example.org', 404),
    ],
  },
  {
    shortName: 'HTTPRouteHTTPSListener',
    features: ['Gateway', 'HTTPRoute'],
    manifests: ['httproute-https-listener.yaml'],
    gateway: 'httproute-https-listener',
    envoyListener: 'port/9453',
    https: true,
    ports: [9453],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'httproute-https-test', 'httproute-https-listener'),
      routeAcceptedAndResolved(
        'HTTPRoute',
        'httproute-https-test-no-hostname',
        'httproute-https-listener',
        'https-with-hostname',
      ),
      // The server name is the host, as upstream sends it.
      { request: { host: 'example.org', path: '/' }, forwarded: { backend: 'infra-backend-v1', path: '/' } },
      { request: { host: 'unknown-example.org', path: '/' }, response: { statuses: [404] } },
      {
        request: { host: 'second-example.org', path: '/' },
        forwarded: { backend: 'infra-backend-v2', path: '/' },
      },
    ],
  },
];
