// GRPCRouteListenerHostnameMatching: four listeners of different hostnames on one port, each
// with a GRPCRoute of its own (manifests/grpcroute-listener-hostname-matching.yaml); a call
// reaches the route of the listener its :authority matches, and a call whose :authority no
// listener takes fails with Unimplemented, as upstream expects (Envoy answers no route with
// HTTP 404, which a gRPC client reads as Unimplemented).
import type { ConformanceCase, ConformanceTest } from './conformance-case.js';
import { routeAcceptedAndResolved } from './route-status.js';

const GATEWAY = 'grpcroute-listener-hostname-matching';

/** An Echo call with this :authority is answered by `backend`. */
function reaches(authority: string, backend: string): ConformanceCase {
  return { grpc: { method: 'Echo', authority }, answered: { backend } };
}

/** An Echo call with this :authority finds no route. */
function unrouted(authority: string): ConformanceCase {
  return { grpc: { method: 'Echo', authority }, failedWith: 'Unimplemented' };
}

export const GRPCROUTE_HOSTNAME_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GRPCRouteListenerHostnameMatching',
    features: ['Gateway', 'GRPCRoute'],
    manifests: ['grpcroute-listener-hostname-matching.yaml'],
    gateway: GATEWAY,
    envoyListener: 'port/9534',
    ports: [9534],
    cases: [
      routeAcceptedAndResolved('GRPCRoute', 'backend-v1', GATEWAY, 'listener-1'),
      routeAcceptedAndResolved('GRPCRoute', 'backend-v2', GATEWAY, 'listener-2'),
      routeAcceptedAndResolved('GRPCRoute', 'backend-v3', GATEWAY, 'listener-3'),
      routeAcceptedAndResolved('GRPCRoute', 'backend-v3', GATEWAY, 'listener-4'),
      reaches('bar.com', 'grpc-infra-backend-v1'),
      reaches('foo.bar.com', 'grpc-infra-backend-v2'),
      reaches('baz.bar.com', 'grpc-infra-backend-v3'),
      reaches('boo.bar.com', 'grpc-infra-backend-v3'),
      reaches('multiple.prefixes.bar.com', 'grpc-infra-backend-v3'),
      reaches('multiple.prefixes.foo.com', 'grpc-infra-backend-v3'),
      unrouted('foo.com'),
      unrouted('no.matching.host'),
    ],
  },
];
