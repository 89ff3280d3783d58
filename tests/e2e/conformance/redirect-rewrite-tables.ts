// RequestRedirect and URLRewrite: upstream's HTTPRouteRedirect*, HTTPRoute30xRedirect and
// HTTPRouteRewrite* tables. Requests carry Host `conformance.example` unless a case says
// otherwise; a redirect without a hostname keeps it.
import type { ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const H = 'conformance.example';
const MODIFIED_HEADERS = {
  request: {
    'X-Header-Remove': 'remove-val',
    'X-Header-Add-Append': 'append-val-1',
    'X-Header-Set': 'set-val',
  },
  expected: {
    'x-header-add': 'header-val-1',
    'x-header-add-append': 'append-val-1,header-val-2',
    'x-header-set': 'set-overwrites-values',
  },
  absent: ['x-header-remove'],
};

export const REDIRECT_REWRITE_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRedirectPath',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRedirect'],
    manifests: ['httproute-redirect-path.yaml'],
    cases: [
      {
        request: { path: '/original-prefix/lemon' },
        redirect: { status: 302, location: `http://${H}/replacement-prefix/lemon` },
      },
      {
        request: { path: '/full/path/original' },
        redirect: { status: 302, location: `http://${H}/full-path-replacement` },
      },
      {
        request: { path: '/path-and-host' },
        redirect: { status: 302, location: 'http://example.org/replacement-prefix' },
      },
      {
        request: { path: '/path-and-status' },
        redirect: { status: 301, location: `http://${H}/replacement-prefix` },
      },
      {
        request: { path: '/full-path-and-host' },
        redirect: { status: 302, location: 'http://example.org/replacement-full' },
      },
      {
        request: { path: '/full-path-and-status' },
        redirect: { status: 301, location: `http://${H}/replacement-full` },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectPort',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect'],
    manifests: ['httproute-redirect-port.yaml'],
    cases: [
      { request: { path: '/port' }, redirect: { status: 302, location: `http://${H}:8083/port` } },
      {
        request: { path: '/port-and-host' },
        redirect: { status: 302, location: 'http://example.org:8083/port-and-host' },
      },
      {
        request: { path: '/port-and-status' },
        redirect: { status: 301, location: `http://${H}:8083/port-and-status` },
      },
      {
        request: { path: '/port-and-host-and-status' },
        redirect: { status: 302, location: 'http://example.org:8083/port-and-host-and-status' },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectScheme',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteSchemeRedirect'],
    manifests: ['httproute-redirect-scheme.yaml'],
    cases: [
      { request: { path: '/scheme' }, redirect: { status: 302, location: `https://${H}/scheme` } },
      {
        request: { path: '/scheme-and-host' },
        redirect: { status: 302, location: 'https://example.org/scheme-and-host' },
      },
      {
        request: { path: '/scheme-and-status' },
        redirect: { status: 301, location: `https://${H}/scheme-and-status` },
      },
      {
        request: { path: '/scheme-and-host-and-status' },
        redirect: { status: 302, location: 'https://example.org/scheme-and-host-and-status' },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectHostAndStatus',
    features: ['Gateway', 'HTTPRoute'],
    manifests: ['httproute-redirect-host-and-status.yaml'],
    cases: [
      {
        request: { path: '/hostname-redirect' },
        redirect: { status: 302, location: 'http://example.org/hostname-redirect' },
      },
      {
        request: { path: '/host-and-status' },
        redirect: { status: 301, location: 'http://example.org/host-and-status' },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectPortAndScheme',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect', 'GatewayPort8080'],
    manifests: ['httproute-redirect-port-and-scheme.yaml'],
    group: 'http-listener-on-80',
    cases: [
      {
        request: { path: '/scheme-nil-and-port-nil' },
        redirect: { status: 302, location: 'http://example.org/scheme-nil-and-port-nil' },
      },
      {
        request: { path: '/scheme-nil-and-port-80' },
        redirect: { status: 302, location: 'http://example.org/scheme-nil-and-port-80' },
      },
      {
        request: { path: '/scheme-nil-and-port-8080' },
        redirect: { status: 302, location: 'http://example.org:8080/scheme-nil-and-port-8080' },
      },
      {
        request: { path: '/scheme-https-and-port-nil' },
        redirect: { status: 302, location: 'https://example.org/scheme-https-and-port-nil' },
      },
      {
        request: { path: '/scheme-https-and-port-443' },
        redirect: { status: 302, location: 'https://example.org/scheme-https-and-port-443' },
      },
      {
        request: { path: '/scheme-https-and-port-8443' },
        redirect: { status: 302, location: 'https://example.org:8443/scheme-https-and-port-8443' },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectPortAndScheme',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect', 'GatewayPort8080'],
    manifests: ['httproute-redirect-port-and-scheme.yaml'],
    group: 'http-listener-on-8080',
    gateway: 'same-namespace-with-http-listener-on-8080',
    cases: [
      {
        request: { path: '/scheme-nil-and-port-nil' },
        redirect: { status: 302, location: 'http://example.org:8080/scheme-nil-and-port-nil' },
      },
      {
        request: { path: '/scheme-nil-and-port-80' },
        redirect: { status: 302, location: 'http://example.org/scheme-nil-and-port-80' },
      },
      {
        request: { path: '/scheme-https-and-port-nil' },
        redirect: { status: 302, location: 'https://example.org/scheme-https-and-port-nil' },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRedirectPortAndScheme',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect', 'GatewayPort8080'],
    manifests: ['httproute-redirect-port-and-scheme.yaml'],
    group: 'https-listener-on-443',
    gateway: 'same-namespace-with-https-listener',
    cases: [
      {
        request: { path: '/scheme-nil-and-port-nil', host: 'example.org' },
        redirect: { status: 302, location: 'https://example.org/scheme-nil-and-port-nil' },
      },
      {
        request: { path: '/scheme-nil-and-port-443', host: 'example.org' },
        redirect: { status: 302, location: 'https://example.org/scheme-nil-and-port-443' },
      },
      {
        request: { path: '/scheme-nil-and-port-8443', host: 'example.org' },
        redirect: { status: 302, location: 'https://example.org:8443/scheme-nil-and-port-8443' },
      },
      {
        request: { path: '/scheme-http-and-port-nil', host: 'example.org' },
        redirect: { status: 302, location: 'http://example.org/scheme-http-and-port-nil' },
      },
      {
        request: { path: '/scheme-http-and-port-80', host: 'example.org' },
        redirect: { status: 302, location: 'http://example.org/scheme-http-and-port-80' },
      },
      {
        request: { path: '/scheme-http-and-port-8080', host: 'example.org' },
        redirect: { status: 302, location: 'http://example.org:8080/scheme-http-and-port-8080' },
      },
    ],
  },
  {
    shortName: 'HTTPRoute303Redirect',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoute303RedirectStatusCode'],
    manifests: ['httproute-303-redirect.yaml'],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'redirect-303', 'same-namespace'),
      // Upstream sends a POST: 303 is the code that tells the client to follow with a GET.
      {
        request: { path: '/see-other', method: 'POST' },
        redirect: { status: 303, location: `http://${H}/see-other` },
      },
    ],
  },
  {
    shortName: 'HTTPRoute307Redirect',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoute307RedirectStatusCode'],
    manifests: ['httproute-307-redirect.yaml'],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'redirect-307', 'same-namespace'),
      { request: { path: '/temporary' }, redirect: { status: 307, location: `http://${H}/temporary` } },
    ],
  },
  {
    shortName: 'HTTPRoute308Redirect',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoute308RedirectStatusCode'],
    manifests: ['httproute-308-redirect.yaml'],
    cases: [
      routeAcceptedAndResolved('HTTPRoute', 'redirect-308', 'same-namespace'),
      { request: { path: '/permanent' }, redirect: { status: 308, location: `http://${H}/permanent` } },
    ],
  },
  {
    shortName: 'HTTPRouteRewritePath',
    features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRewrite'],
    manifests: ['httproute-rewrite-path.yaml'],
    cases: [
      { request: { path: '/prefix/one/two' }, forwarded: { backend: 'infra-backend-v1', path: '/one/two' } },
      {
        request: { path: '/strip-prefix/three' },
        forwarded: { backend: 'infra-backend-v1', path: '/three' },
      },
      { request: { path: '/strip-prefix' }, forwarded: { backend: 'infra-backend-v1', path: '/' } },
      { request: { path: '/full/one/two' }, forwarded: { backend: 'infra-backend-v1', path: '/one' } },
      {
        request: { path: '/full/rewrite-path-and-modify-headers/test', headers: MODIFIED_HEADERS.request },
        forwarded: {
          backend: 'infra-backend-v1',
          path: '/test',
          headers: MODIFIED_HEADERS.expected,
          absentHeaders: MODIFIED_HEADERS.absent,
        },
      },
      {
        request: { path: '/prefix/rewrite-path-and-modify-headers/one', headers: MODIFIED_HEADERS.request },
        forwarded: {
          backend: 'infra-backend-v1',
          path: '/prefix/one',
          headers: MODIFIED_HEADERS.expected,
          absentHeaders: MODIFIED_HEADERS.absent,
        },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRewriteHost',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteHostRewrite'],
    manifests: ['httproute-rewrite-host.yaml'],
    cases: [
      {
        request: { path: '/one', host: 'rewrite.example' },
        forwarded: { backend: 'infra-backend-v1', path: '/one', host: 'one.example.org' },
      },
      {
        request: { path: '/two', host: 'rewrite.example' },
        forwarded: { backend: 'infra-backend-v2', path: '/two', host: 'example.org' },
      },
      {
        request: {
          path: '/rewrite-host-and-modify-headers',
          host: 'rewrite.example',
          headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
        },
        forwarded: {
          backend: 'infra-backend-v2',
          path: '/rewrite-host-and-modify-headers',
          host: 'test.example.org',
          headers: MODIFIED_HEADERS.expected,
          absentHeaders: MODIFIED_HEADERS.absent,
        },
      },
    ],
  },
];
