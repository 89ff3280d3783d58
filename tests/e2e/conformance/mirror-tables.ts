// RequestMirror: upstream's HTTPRouteRequestMirror and HTTPRouteRequestMultipleMirrors
// tables. A case's `mirroredTo` backends must each receive a copy of the request.
import type { ConformanceTest } from './conformance-case.js';

const HEADERS = {
  request: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
  expected: {
    'x-header-add': 'header-val-1',
    'x-header-add-append': 'append-val-1,header-val-2',
    'x-header-set': 'set-overwrites-values',
  },
  absent: ['x-header-remove'],
};

export const MIRROR_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRequestMirror',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror'],
    manifests: ['httproute-request-mirror.yaml'],
    cases: [
      {
        request: { path: '/mirror' },
        forwarded: { backend: 'infra-backend-v1', path: '/mirror', mirroredTo: ['infra-backend-v2'] },
      },
      {
        request: { path: '/mirror-and-modify-headers', headers: HEADERS.request },
        forwarded: {
          backend: 'infra-backend-v1',
          path: '/mirror-and-modify-headers',
          headers: HEADERS.expected,
          absentHeaders: HEADERS.absent,
          mirroredTo: ['infra-backend-v2'],
        },
      },
    ],
  },
  {
    shortName: 'HTTPRouteRequestMultipleMirrors',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors'],
    manifests: ['httproute-request-multiple-mirrors.yaml'],
    cases: [
      {
        request: { path: '/multi-mirror' },
        forwarded: {
          backend: 'infra-backend-v1',
          path: '/multi-mirror',
          mirroredTo: ['infra-backend-v2', 'infra-backend-v3'],
        },
      },
      {
        request: { path: '/multi-mirror-and-modify-request-headers', headers: HEADERS.request },
        forwarded: {
          backend: 'infra-backend-v1',
          path: '/multi-mirror-and-modify-request-headers',
          headers: HEADERS.expected,
          absentHeaders: HEADERS.absent,
          mirroredTo: ['infra-backend-v2', 'infra-backend-v3'],
        },
      },
    ],
  },
];
