// CORS (GEP-1767): upstream's HTTPRouteCORS table. A preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is answered by the gateway; other requests reach the
// backend and come back with the CORS headers when their origin is allowed. Where the
// specification leaves a choice (echo the origin or `*`, list order, spaces after commas),
// a case takes every answer it allows.
import type { ConformanceCase, ConformanceTest, ResponseExpectation } from './conformance-case.js';

const PREFLIGHT_OK = [200, 204];

function preflight(
  path: string,
  headers: Record<string, string>,
  response: Omit<ResponseExpectation, 'statuses'>,
  statuses: readonly number[] = PREFLIGHT_OK,
): ConformanceCase {
  return { request: { path, method: 'OPTIONS', headers }, response: { statuses, ...response } };
}

function simple(
  path: string,
  method: string,
  headers: Record<string, string>,
  response: Omit<ResponseExpectation, 'statuses'>,
): ConformanceCase {
  return {
    request: { path, method, headers },
    forwarded: { backend: 'infra-backend-v1', path },
    response: { statuses: [200], ...response },
  };
}

/** The whole answer /cors-1 gives an allowed origin's preflight. */
function listedPreflight(origin: string): ConformanceCase {
  return preflight(
    '/cors-1',
    {
      Origin: origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      headers: {
        'access-control-allow-origin': [origin],
        'access-control-allow-methods': ['GET,OPTIONS', 'OPTIONS,GET'],
        'access-control-allow-headers': ['x-header-1,x-header-2', 'x-header-2,x-header-1'],
        'access-control-expose-headers': ['x-header-3,x-header-4', 'x-header-4,x-header-3'],
        'access-control-max-age': ['3600'],
        'access-control-allow-credentials': ['true'],
      },
      ignoreWhitespace: true,
    },
  );
}

const ASKS_FOR_PUT = {
  'access-control-request-method': 'PUT',
  'access-control-request-headers': 'x-header-1, x-header-2',
};

export const CORS_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteCORS',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteCORS'],
    manifests: ['httproute-cors.yaml'],
    cases: [
      // An origin listed exactly, one under a wildcard, one several labels under it.
      listedPreflight('https://www.foo.com'),
      listedPreflight('https://www.bar.com'),
      listedPreflight('https://xpto.www.bar.com'),
      preflight(
        '/cors-1',
        { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
        { absentHeaders: ['access-control-allow-origin'] },
        // Refused: an OK answer without the CORS headers, or 403.
        [200, 204, 403],
      ),
      simple(
        '/cors-1',
        'GET',
        { Origin: 'https://www.foo.com', 'access-control-request-method': 'GET' },
        {
          headers: { 'access-control-allow-origin': ['https://www.foo.com'] },
        },
      ),
      simple(
        '/cors-1',
        'GET',
        { Origin: 'https://www.bar.com', 'access-control-request-method': 'GET' },
        {
          headers: { 'access-control-allow-origin': ['https://www.bar.com'] },
        },
      ),
      simple(
        '/cors-1',
        'GET',
        { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
        {
          absentHeaders: ['access-control-allow-origin'],
        },
      ),
      // allowMethods '*' without credentials: the method asked for, or '*'.
      preflight(
        '/cors-2',
        { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
        {
          headers: {
            'access-control-allow-methods': ['POST', '*'],
            'access-control-allow-origin': ['https://www.foo.com'],
          },
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
      preflight(
        '/cors-2',
        { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
        {
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
      // allowOrigins '*' without credentials: the origin (with its port) or '*'.
      preflight(
        '/cors-wildcard-origin',
        { Origin: 'https://foobar.com', 'access-control-request-method': 'PUT' },
        {
          headers: {
            'access-control-allow-origin': ['https://foobar.com', '*'],
            'access-control-allow-methods': ['PUT'],
          },
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
      preflight(
        '/cors-wildcard-origin',
        { Origin: 'https://foobar.com:12345', 'access-control-request-method': 'PUT' },
        {
          headers: {
            'access-control-allow-origin': ['https://foobar.com:12345', '*'],
            'access-control-allow-methods': ['PUT'],
          },
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
      simple(
        '/cors-wildcard-origin',
        'PUT',
        { Origin: 'https://foobar.com:12345' },
        {
          headers: { 'access-control-allow-origin': ['https://foobar.com:12345', '*'] },
        },
      ),
      simple(
        '/cors-wildcard-origin',
        'PUT',
        { Origin: 'https://foobar.com' },
        {
          headers: { 'access-control-allow-origin': ['https://foobar.com', '*'] },
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
      // Wildcards with credentials must echo what was asked; without, '*' is allowed too.
      preflight(
        '/cors-wildcard-methods-headers',
        { Origin: 'https://other.foo.com', ...ASKS_FOR_PUT },
        {
          headers: {
            'access-control-allow-origin': ['https://other.foo.com'],
            'access-control-allow-methods': ['PUT'],
            'access-control-allow-headers': ['x-header-1,x-header-2', 'x-header-2,x-header-1'],
            'access-control-allow-credentials': ['true'],
          },
          ignoreWhitespace: true,
        },
      ),
      preflight(
        '/cors-wildcard-methods-headers-unauth',
        { Origin: 'https://other.foo.com', ...ASKS_FOR_PUT },
        {
          headers: {
            'access-control-allow-origin': ['https://other.foo.com', '*'],
            'access-control-allow-methods': ['PUT', '*'],
            'access-control-allow-headers': ['x-header-1,x-header-2', 'x-header-2,x-header-1', '*'],
          },
          absentHeaders: ['access-control-allow-credentials'],
          ignoreWhitespace: true,
        },
      ),
      simple(
        '/cors-wildcard-methods-headers',
        'GET',
        { Origin: 'https://other.foo.com' },
        {
          headers: {
            'access-control-allow-origin': ['https://other.foo.com'],
            'access-control-allow-credentials': ['true'],
          },
        },
      ),
      simple(
        '/cors-wildcard-methods-headers-unauth',
        'GET',
        { Origin: 'https://other.foo.com' },
        {
          headers: { 'access-control-allow-origin': ['https://other.foo.com', '*'] },
          absentHeaders: ['access-control-allow-credentials'],
        },
      ),
    ],
  },
];
