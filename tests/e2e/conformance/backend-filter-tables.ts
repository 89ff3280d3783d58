// Header modifiers on backendRefs: upstream's HTTPRouteRequestHeaderModifierBackendWeights
// (100 requests split between two backends, each sees only its own backendRef's header).
import type { ConformanceTest } from './conformance-case.js';

export const BACKEND_FILTER_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRequestHeaderModifierBackendWeights',
    features: ['Gateway', 'HTTPRouteBackendRequestHeaderModification', 'HTTPRoute'],
    manifests: ['httproute-request-header-modifier-backend-weights.yaml'],
    cases: [{ request: { path: '/' }, repeated: { count: 100, headerNamesBackend: 'backend' } }],
  },
];
