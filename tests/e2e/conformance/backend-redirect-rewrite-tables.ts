// RequestRedirect and URLRewrite on a backendRef: upstream's HTTPRouteBackendRequestRedirect
// and HTTPRouteBackendURLRewrite. Both are newer than UPSTREAM_TAG: read from upstream's main
// branch (commit 4b6e014b7, "add BackendRef URLRewrite and RequestRedirect tests").
import type { ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const REDIRECT_HOST = 'backend-redirect.example';
const REWRITE_HOST = 'backend-rewrite.example';

export const BACKEND_REDIRECT_REWRITE_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteBackendRequestRedirect',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendRequestRedirect'],
    manifests: ['httproute-backend-request-redirect.yaml'],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'backend-request-redirect', 'same-namespace'),
      {
        request: { path: '/full/original', host: REDIRECT_HOST },
        redirect: { status: 302, location: `http://${REDIRECT_HOST}/redirected-full` },
      },
      {
        request: { path: '/prefix/original', host: REDIRECT_HOST },
        redirect: { status: 302, location: `http://${REDIRECT_HOST}/redirected-prefix/original` },
      },
    ],
  },
  {
    shortName: 'HTTPRouteBackendURLRewrite',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendURLRewrite'],
    manifests: ['httproute-backend-url-rewrite.yaml'],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'backend-url-rewrite', 'same-namespace'),
      {
        request: { path: '/full/original', host: REWRITE_HOST },
        forwarded: { backend: 'infra-backend-v1', path: '/rewritten-full' },
      },
      {
        request: { path: '/prefix/original', host: REWRITE_HOST },
        forwarded: { backend: 'infra-backend-v1', path: '/rewritten-prefix/original' },
      },
    ],
  },
];
