// GRPCRoute: upstream's GRPCRouteWeight, GRPCRouteNamedRule and GRPCRouteRequestHeaderModifier,
// called with grpcurl (grpc-case.ts) on upstream's gRPC backends (grpc-infra-backend-v1..v3,
// the project's Echo service). The Echo service has no EchoTwo: EchoStream stands for it.
// They share a Gateway of their own (manifests/grpcroute-gateway.yaml), each GRPCRoute with a
// hostname of its own, which the calls send as :authority.
// GRPCRouteRequestHeaderModifier is newer than UPSTREAM_TAG: read from upstream's main branch
// (commit bc36b0222). Upstream's client compares neither metadata nor headers; these cases
// check what the backend received, with the values its manifest gives.
import type { ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const HEADERS = 'grpc-header-modifier.example';
/** The Gateway and the port it declares. */
const ON_GRPC_GATEWAY = { gateway: 'same-namespace-grpc', ports: [9533] } as const;

export const GRPCROUTE_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GRPCRouteWeight',
    features: ['Gateway', 'GRPCRoute'],
    manifests: ['grpcroute-gateway.yaml', 'grpcroute-weight.yaml'],
    ...ON_GRPC_GATEWAY,
    cases: [
      routeAcceptedAndResolved('GRPCRoute', 'weighted-backends', 'same-namespace-grpc'),
      // Upstream's first call only has to succeed, before the distribution is measured.
      { grpc: { method: 'Echo', authority: 'grpc-weight.example' }, answered: {} },
      {
        grpc: { method: 'Echo', authority: 'grpc-weight.example' },
        // Upstream: 500 calls, each share within 5 points. Envoy's locality scheduler is
        // deterministic, so 200 calls (each a grpcurl process) tell as much.
        weighted: {
          count: 200,
          shares: { 'grpc-infra-backend-v1': 0.7, 'grpc-infra-backend-v2': 0.3, 'grpc-infra-backend-v3': 0 },
          tolerance: 0.05,
        },
      },
    ],
  },
  {
    shortName: 'GRPCRouteNamedRule',
    features: ['Gateway', 'GRPCRoute', 'GRPCRouteNamedRouteRule'],
    manifests: ['grpcroute-gateway.yaml', 'grpcroute-named-rule.yaml'],
    ...ON_GRPC_GATEWAY,
    cases: [
      routeAcceptedAndResolved('GRPCRoute', 'grpc-named-rules', 'same-namespace-grpc'),
      {
        grpc: { method: 'Echo', authority: 'grpc-named-rule.example' },
        answered: { backend: 'grpc-infra-backend-v1' },
      },
      {
        grpc: { method: 'EchoStream', authority: 'grpc-named-rule.example' },
        answered: { backend: 'grpc-infra-backend-v2' },
      },
    ],
  },
  {
    shortName: 'GRPCRouteRequestHeaderModifier',
    features: ['Gateway', 'GRPCRoute', 'GRPCRouteRequestHeaderModifier'],
    manifests: ['grpcroute-gateway.yaml', 'grpcroute-request-header-modifier.yaml'],
    ...ON_GRPC_GATEWAY,
    cases: [
      routeAcceptedAndResolved('GRPCRoute', 'grpc-request-header-modifier', 'same-namespace-grpc'),
      {
        grpc: {
          method: 'Echo',
          authority: HEADERS,
          metadata: { 'test-case': 'set', 'Some-Other-Header': 'this-header-should-be-set' },
        },
        answered: {
          backend: 'grpc-infra-backend-v1',
          metadata: {
            'some-other-header': 'this-header-should-be-set',
            'x-header-set': 'set-overwrites-values',
          },
        },
      },
      {
        grpc: {
          method: 'Echo',
          authority: HEADERS,
          metadata: {
            'test-case': 'set',
            'Some-Other-Header': 'this-header-should-be-set',
            'X-Header-Set': 'this-value-should-be-overwritten',
          },
        },
        answered: {
          backend: 'grpc-infra-backend-v1',
          metadata: {
            'some-other-header': 'this-header-should-be-set',
            'x-header-set': 'set-overwrites-values',
          },
        },
      },
      {
        grpc: {
          method: 'Echo',
          authority: HEADERS,
          metadata: { 'test-case': 'add', 'Some-Other-Header': 'this-header-should-be-set' },
        },
        answered: {
          backend: 'grpc-infra-backend-v1',
          metadata: {
            'some-other-header': 'this-header-should-be-set',
            'x-header-add': 'add-appends-values',
          },
        },
      },
      {
        grpc: {
          method: 'Echo',
          authority: HEADERS,
          metadata: {
            'test-case': 'add',
            'Some-Other-Header': 'this-header-should-be-set',
            'X-Header-Add': 'this-value-should-be-appended',
          },
        },
        answered: {
          backend: 'grpc-infra-backend-v1',
          metadata: {
            'some-other-header': 'this-header-should-be-set',
            'x-header-add': 'this-value-should-be-appended,add-appends-values',
          },
        },
      },
      {
        grpc: {
          method: 'Echo',
          authority: HEADERS,
          metadata: { 'test-case': 'remove', 'X-Header-Remove': 'this-should-be-removed' },
        },
        answered: { backend: 'grpc-infra-backend-v1', absentMetadata: ['x-header-remove'] },
      },
      {
        grpc: {
          method: 'EchoStream',
          authority: HEADERS,
          metadata: {
            'X-Header-Set-2': 'set-header-2',
            'X-Header-Add-2': 'add-header-2',
            'X-Header-Remove-2': 'should-be-removed-2',
            'Some-Other-Header': 'another-header-val',
          },
        },
        answered: {
          backend: 'grpc-infra-backend-v2',
          metadata: {
            'x-header-set-1': 'header-set-1',
            'x-header-set-2': 'header-set-2',
            'x-header-add-1': 'header-add-1',
            'x-header-add-2': 'add-header-2,header-add-2',
            'some-other-header': 'another-header-val',
          },
          absentMetadata: ['x-header-remove-2'],
        },
      },
      {
        // The filter names headers in canonical case, the call in lower case.
        grpc: {
          method: 'EchoStream',
          authority: HEADERS,
          metadata: {
            'x-header-set-1': 'original-set-1',
            'x-header-add-1': 'existing-add-1',
            'x-header-remove-1': 'should-be-removed-1',
          },
        },
        answered: {
          backend: 'grpc-infra-backend-v2',
          metadata: {
            'x-header-set-1': 'header-set-1',
            'x-header-set-2': 'header-set-2',
            'x-header-add-1': 'existing-add-1,header-add-1',
            'x-header-add-2': 'header-add-2',
          },
          absentMetadata: ['x-header-remove-1'],
        },
      },
    ],
  },
];
