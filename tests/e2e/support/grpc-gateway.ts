// A gateway-mode stack for gRPC tests: the gRPC test backend on 127.0.0.3 behind a
// GRPCRoute on its own listener, with the given rule fields for the Echo method.
import { startGrpcBackend } from '../../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../../backends/running-backend.js';
import { type LocalGateway, startLocalGateway } from '../../../extproc/src/local/local-gateway.js';
import { configDir } from './attach-config.js';
import { TEST_SESSION_KEY } from './gateway-fixture.js';
import { FileProvider } from '../../../extproc/src/provider/file.js';

export interface GrpcGateway {
  /** host:port of the gateway's gRPC listener, as grpcurl wants it. */
  readonly address: string;
  /** host:port of the backend itself (for its Attempts RPC). */
  readonly backendAddress: string;
  readonly gateway: LocalGateway;
  stop(): Promise<void>;
}

/** `ruleFields`: YAML flow fields for the Echo rule, e.g. `retry: { reasons: [UNAVAILABLE] }`. */
export async function startGrpcGateway(ruleFields: string): Promise<GrpcGateway> {
  const backend: RunningBackend = await startGrpcBackend({ address: '127.0.0.3', name: 'grpc-backend' });
  const config = configDir({
    'grpc.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: grpc, protocol: HTTP, port: 10001 }
---
apiVersion: v1
kind: Service
metadata: { name: grpc-echo, namespace: default }
spec: { ports: [{ name: grpc, port: 50051, targetPort: ${backend.port} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: grpc-echo-1, namespace: default, labels: { kubernetes.io/service-name: grpc-echo } }
addressType: IPv4
ports: [{ name: grpc, port: ${backend.port} }]
endpoints: [{ addresses: ['${backend.address}'] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
    - matches: [{ method: { service: steadfast.test.v1.Echo, method: Echo } }]
      ${ruleFields}
      backendRefs: [{ name: grpc-echo, port: 50051 }]
    - backendRefs: [{ name: grpc-echo, port: 50051 }]
`,
  });
  try {
    const gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [config.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: { 10001: 0 },
      debounceMs: 50,
      log: () => undefined,
    });
    return {
      address: gateway.envoy.url().replace('http://', ''),
      backendAddress: `${backend.address}:${backend.port}`,
      gateway,
      stop: async () => {
        await gateway.stop();
        await backend.close();
        config.remove();
      },
    };
  } catch (e) {
    await backend.close();
    config.remove();
    throw e;
  }
}
