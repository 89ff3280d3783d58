// Listeners sharing a port. GatewayHTTPListenerIsolation: four listeners (no hostname,
// *.example.com, *.foo.example.com, abc.foo.example.com), each with one route on a path named
// after it; a request reaches a route only through the most specific listener its host
// matches. Both groups send the same table: routes without hostnames, and routes that name all
// four hostnames. HTTPRouteListenerHostnameMatching: four listeners of different hostnames,
// each host served by its own listener's route.
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const PATHS = [
  '/empty-hostname',
  '/wildcard-example-com',
  '/wildcard-foo-example-com',
  '/abc-foo-example-com',
];
/** Each host, and the one path (its listener's) it may reach. */
const HOSTS: readonly [string, string][] = [
  ['bar.com', '/empty-hostname'],
  ['bar.example.com', '/wildcard-example-com'],
  ['bar.foo.example.com', '/wildcard-foo-example-com'],
  ['abc.foo.example.com', '/abc-foo-example-com'],
];

const CASES: readonly ConformanceCase[] = HOSTS.flatMap(([host, own]) =>
  PATHS.map((path): ConformanceCase =>
    path === own
      ? { request: { host, path }, forwarded: { backend: 'infra-backend-v1', path, host } }
      : { request: { host, path }, response: { statuses: [404] } },
  ),
);

/** Upstream first checks that each route is accepted, its references resolved, on its listener. */
function routesAccepted(gateway: string, suffix: string): ConformanceCase[] {
  return PATHS.map((p) => p.slice(1)).map((listener) =>
    routeAcceptedAndResolved('HTTPRoute', `attaches-to-${listener}${suffix}`, gateway, listener),
  );
}

/** A request to `/` for `host` reaches `backend`. */
function reaches(host: string, backend: string): ConformanceCase {
  return { request: { host, path: '/' }, forwarded: { backend, path: '/', host } };
}

const HOSTNAME_MATCHING = 'httproute-listener-hostname-matching';

const FEATURES = ['Gateway', 'GatewayHTTPListenerIsolation', 'HTTPRoute'];

export const LISTENER_ISOLATION_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GatewayHTTPListenerIsolation',
    group: 'hostnames-only-in-listeners',
    features: FEATURES,
    manifests: ['gateway-http-listener-isolation.yaml'],
    gateway: 'http-listener-isolation',
    envoyListener: 'port/8380',
    ports: [8380],
    cases: [...routesAccepted('http-listener-isolation', ''), ...CASES],
  },
  {
    shortName: 'GatewayHTTPListenerIsolation',
    group: 'hostnames-in-listeners-and-routes',
    features: FEATURES,
    manifests: ['gateway-http-listener-isolation-with-hostname-intersection.yaml'],
    gateway: 'http-listener-isolation-with-hostname-intersection',
    envoyListener: 'port/8381',
    ports: [8381],
    cases: [
      ...routesAccepted('http-listener-isolation-with-hostname-intersection', '-with-hostname-intersection'),
      ...CASES,
    ],
  },
  {
    shortName: 'HTTPRouteListenerHostnameMatching',
    features: ['Gateway', 'HTTPRoute'],
    manifests: ['httproute-listener-hostname-matching.yaml'],
    gateway: HOSTNAME_MATCHING,
    envoyListener: 'port/8386',
    ports: [8386],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'backend-v1', HOSTNAME_MATCHING, 'listener-1'),
      routeAcceptedAndResolved('HTTPRoute', 'backend-v2', HOSTNAME_MATCHING, 'listener-2'),
      routeAcceptedAndResolved('HTTPRoute', 'backend-v3', HOSTNAME_MATCHING, 'listener-3'),
      routeAcceptedAndResolved('HTTPRoute', 'backend-v3', HOSTNAME_MATCHING, 'listener-4'),
      reaches('bar.com', 'infra-backend-v1'),
      reaches('foo.bar.com', 'infra-backend-v2'),
      reaches('baz.bar.com', 'infra-backend-v3'),
      reaches('boo.bar.com', 'infra-backend-v3'),
      reaches('multiple.prefixes.bar.com', 'infra-backend-v3'),
      reaches('multiple.prefixes.foo.com', 'infra-backend-v3'),
      { request: { host: 'foo.com', path: '/' }, response: { statuses: [404] } },
      { request: { host: 'no.matching.host', path: '/' }, response: { statuses: [404] } },
    ],
  },
];
