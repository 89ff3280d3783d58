// Listener isolation: upstream's GatewayHTTPListenerIsolation. Four listeners share a port (no
// hostname, *.example.com, *.foo.example.com, abc.foo.example.com), each with one route on a
// path named after it; a request reaches a route only through the most specific listener
// its host matches. Both groups send the same table: routes without hostnames, and routes
// that name all four hostnames.
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';

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
    cases: CASES,
  },
  {
    shortName: 'GatewayHTTPListenerIsolation',
    group: 'hostnames-in-listeners-and-routes',
    features: FEATURES,
    manifests: ['gateway-http-listener-isolation-with-hostname-intersection.yaml'],
    gateway: 'http-listener-isolation-with-hostname-intersection',
    envoyListener: 'port/8381',
    ports: [8381],
    cases: CASES,
  },
];
