// Hostnames: upstream's HTTPRouteHostnameIntersection, its three request subtests. A route
// serves the hostnames it shares with a listener; a port in Host is ignored for matching
// and reaches the backend as sent; a route sharing none is not attached.
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';

/** The request reaches `backend`, with Host exactly as the client sent it. */
function served(host: string, path: string, backend: string): ConformanceCase {
  return { request: { host, path }, forwarded: { backend, path, host } };
}

function notFound(host: string, path: string): ConformanceCase {
  return { request: { host, path }, response: { statuses: [404] } };
}

const V1 = 'infra-backend-v1';
const V2 = 'infra-backend-v2';
const V3 = 'infra-backend-v3';
const FEATURES = ['Gateway', 'HTTPRoute'];
const MANIFESTS = ['httproute-hostname-intersection.yaml'];
const GATEWAY = 'httproute-hostname-intersection';

export const HOSTNAME_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteHostnameIntersection',
    group: 'intersecting',
    features: FEATURES,
    manifests: MANIFESTS,
    gateway: GATEWAY,
    envoyListener: 'port/8090',
    cases: [
      served('very.specific.com', '/s1', V1),
      served('very.specific.com:1234', '/s1', V1),
      notFound('non.matching.com', '/s1'),
      notFound('foo.nonmatchingwildcard.io', '/s1'),
      notFound('foo.wildcard.io', '/s1'),
      notFound('very.specific.com', '/non-matching-prefix'),
      served('foo.wildcard.io', '/s2', V2),
      served('bar.wildcard.io', '/s2', V2),
      served('foo.bar.wildcard.io', '/s2', V2),
      notFound('non.matching.com', '/s2'),
      notFound('wildcard.io', '/s2'),
      notFound('very.specific.com', '/s2'),
      notFound('foo.wildcard.io', '/non-matching-prefix'),
      served('very.specific.com', '/s3', V3),
      notFound('non.matching.com', '/s3'),
      notFound('foo.specific.com', '/s3'),
      notFound('foo.wildcard.io', '/s3'),
      notFound('very.specific.com', '/non-matching-prefix'),
      served('foo.anotherwildcard.io', '/s4', V1),
      served('bar.anotherwildcard.io', '/s4', V1),
      served('foo.bar.anotherwildcard.io', '/s4', V1),
      notFound('anotherwildcard.io', '/s4'),
      notFound('foo.wildcard.io', '/s4'),
      notFound('very.specific.com', '/s4'),
      notFound('foo.anotherwildcard.io', '/non-matching-prefix'),
    ],
  },
  {
    shortName: 'HTTPRouteHostnameIntersection',
    group: 'not-intersecting',
    features: FEATURES,
    manifests: MANIFESTS,
    gateway: GATEWAY,
    envoyListener: 'port/8090',
    cases: [notFound('specific.but.wrong.com', '/s5'), notFound('wildcard.io', '/s5')],
  },
  {
    shortName: 'HTTPRouteHostnameIntersection',
    group: 'unspecified-listener-hostname',
    features: FEATURES,
    manifests: MANIFESTS,
    gateway: 'httproute-hostname-intersection-all',
    listener: 'listener-1',
    cases: [
      served('first.com', '/', V2),
      served('sub.first.com', '/', V2),
      served('second.com', '/', V2),
      served('sub.second.com', '/', V2),
      notFound('third.com', '/'),
      notFound('sub.third.com', '/'),
    ],
  },
];
