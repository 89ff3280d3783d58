// GEP-1619 failover over gRPC, in both modes: a GRPCRoute with a header session and no retry
// stanza, three gRPC backends. The pinned backend is killed; 200 calls with the old token all
// end OK on live backends, each with a new token naming the backend that answered; when the
// backend comes back, new sessions reach it again. (session-failover.test.ts is the same over
// HTTP with cookie and header sessions.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Client, type ClientUnaryCall, Metadata, credentials, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptLedger } from '../../backends/attempt-ledger.js';
import { clientConstructor, echoServiceName, loadEchoPackage } from '../../backends/grpc/echo-protos.js';
import { startGrpcBackend } from '../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { extProcForwardRules } from '../../extproc/src/envoy/attach-snippet.js';
import { startEnvoy } from '../../extproc/src/local/envoy-process.js';
import { startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { openSessionToken } from '../support/session-token.js';
import { REPO_ROOT } from '../support/paths.js';
import { configDir } from './support/attach-config.js';
import { BACKEND_ADDRESSES, untilExtProcAnswers, within } from './support/attach-stack.js';
import { startControlService } from './support/control-service.js';
import { rewriteEnvoyConfig } from './support/envoy-config-rewrite.js';
import { TEST_SESSION_KEY } from './support/gateway-fixture.js';
import { MODES, type ModeName, isGatewayMode } from './support/mode-stack.js';
import { POLICY_HEADER, type PolicyStack, oneWithPolicy } from './support/with-policy.js';
import type { FilterBuildName } from '../support/filter-builds.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

const RULE = 'grpcroute/default/echo/rule/0';
const KEYS = [Buffer.from(TEST_SESSION_KEY, 'base64')];
const LISTENER_PORT = 10001;

function objectsYaml(backends: readonly RunningBackend[]): string {
  const port = backends[0]!.port;
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: grpc, protocol: HTTP, port: ${LISTENER_PORT} }
---
apiVersion: v1
kind: Service
metadata: { name: grpc-echo, namespace: default }
spec: { ports: [{ name: grpc, port: 50051, targetPort: ${port} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: grpc-echo-1, namespace: default, labels: { kubernetes.io/service-name: grpc-echo } }
addressType: IPv4
ports: [{ name: grpc, port: ${port} }]
endpoints:
${backends.map((b) => `  - addresses: ['${b.address}']`).join('\n')}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: default }
spec:
  parentRefs: [{ name: edge }]
  rules:
    - matches: [{ method: { service: steadfast.test.v1.Echo } }]
      sessionPersistence: { sessionName: x-session, type: Header }
      backendRefs: [{ name: grpc-echo, port: 50051 }]
`;
}

interface Stack extends PolicyStack {
  /** host:port of the listener the GRPCRoute attaches to. */
  readonly address: string;
  stop(): Promise<void>;
}

async function startGateway(files: Record<string, string>, build: FilterBuildName): Promise<Stack> {
  const dir = configDir(files);
  const gateway = await startLocalGateway({
    provider: new FileProvider({ paths: [dir.path] }),
    address: '127.0.0.1',
    adminPort: 0,
    envoyAdminPort: 0,
    sessionKeys: [TEST_SESSION_KEY],
    listenerPorts: { [LISTENER_PORT]: 0 },
    filter: build,
    debounceMs: 50,
    log: () => undefined,
  }).catch((e: unknown) => {
    dir.remove();
    throw e;
  });
  return {
    mode: build === 'native' ? 'gateway' : 'gateway-wasm',
    envoy: gateway.envoy,
    address: gateway.envoy.url().replace('http://', ''),
    stop: async () => {
      await gateway.stop();
      dir.remove();
    },
  };
}

/** `steadfast serve` and envoy/attach-example.yaml, its `app` cluster speaking HTTP/2 to the gRPC backends. */
async function startAttach(
  files: Record<string, string>,
  backends: readonly RunningBackend[],
  mode: ModeName,
): Promise<Stack> {
  const dir = configDir(files);
  const control = await startControlService(
    ['serve', '--config', dir.path, '--ext-proc-address', '127.0.0.1:0', '--admin-port', '0'],
    { readyTimeoutMs: 60_000 },
  ).catch((e: unknown) => {
    dir.remove();
    throw e;
  });
  try {
    const config = rewriteEnvoyConfig(readFileSync(join(REPO_ROOT, 'envoy/attach-example.yaml'), 'utf8'), {
      clusters: {
        app: backends.map((b) => ({ address: b.address, port: b.port })),
        steadfast_extproc: [{ address: '127.0.0.1', port: control.grpcPort }],
      },
      http2Clusters: ['app'],
      // debug: responses name the policy they got (POLICY_HEADER), so one without it shows.
      filterConfig: JSON.stringify({
        policySource: 'metadata',
        sessionKeys: [TEST_SESSION_KEY],
        debug: true,
      }),
      extProcForwardRules: extProcForwardRules(
        compileSnapshot(Object.entries(files).map(([path, text]) => ({ path, text }))).ir,
      ),
      ...(mode === 'attach-uncached' ? { answerCache: false } : {}),
      build: mode === 'attach-native' ? 'native' : 'wasm',
    });
    const envoy = await startEnvoy({ config });
    await untilExtProcAnswers(envoy, envoy.url('ingress'));
    return {
      mode,
      envoy,
      address: envoy.url('ingress').replace('http://', ''),
      stop: async () => {
        await envoy.stop();
        await control.stop();
        dir.remove();
      },
    };
  } catch (e) {
    await control.stop();
    dir.remove();
    throw e;
  }
}

type EchoClient = Client & {
  Echo(
    request: { message: string },
    metadata: Metadata,
    options: { deadline: number },
    callback: (error: ServiceError | null, reply?: { instance: string }) => void,
  ): ClientUnaryCall;
};

interface Answer {
  readonly code: number;
  readonly instance: string;
  /** The session token the response carried, if any. */
  readonly token: string | undefined;
  /** Whether the call had its rule's policy (attach mode's POLICY_HEADER). */
  readonly policy: boolean;
}

describe.each(MODES)('%s mode: gRPC with a header session', (mode: ModeName) => {
  const pkg = loadEchoPackage();
  const Echo = clientConstructor(pkg, echoServiceName);
  const backends: RunningBackend[] = [];
  const restarted: RunningBackend[] = [];
  let stack: Stack | undefined;
  let client: EchoClient;

  beforeAll(async () => {
    const ledger = new AttemptLedger();
    for (const address of BACKEND_ADDRESSES) {
      const port = backends[0]?.port ?? 0;
      backends.push(await startGrpcBackend({ address, port, name: `grpc-${address}`, ledger }));
    }
    const files = { 'grpc.yaml': objectsYaml(backends) };
    stack = isGatewayMode(mode)
      ? await startGateway(files, mode === 'gateway' ? 'native' : 'wasm')
      : await startAttach(files, backends, mode);
    client = new Echo(stack.address, credentials.createInsecure()) as unknown as EchoClient;
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await stack?.stop();
    await Promise.all([...backends, ...restarted].map((b) => b.close()));
  });

  /** One unary Echo call, carrying `token` in x-session when given. */
  const callOnce = (token?: string): Promise<Answer> =>
    new Promise((resolve) => {
      const metadata = new Metadata();
      if (token !== undefined) metadata.set('x-session', token);
      let headers = new Metadata();
      const c = client.Echo(
        { message: 'failover' },
        metadata,
        { deadline: Date.now() + 10_000 },
        (error: ServiceError | null, reply?: { instance: string }) => {
          const issued = headers.get('x-session')[0];
          resolve({
            code: error?.code ?? 0,
            instance: error === null ? (reply?.instance ?? '') : '',
            token: typeof issued === 'string' ? issued : undefined,
            // A call answered by Envoy alone (trailers only) carries it in the trailers.
            policy: [headers, error?.metadata].some((m) => (m?.get(POLICY_HEADER).length ?? 0) > 0),
          });
        },
      );
      c.on('metadata', (m: Metadata) => {
        headers = m;
      });
    });

  // Each call with its rule's policy: in attach mode one whose ext_proc answer came too late
  // went on without it (no session, no failover), and is sent again (support/with-policy.ts).
  const call = (token?: string): Promise<Answer> =>
    oneWithPolicy(
      stack!,
      () => callOnce(token),
      (a) => a.policy,
    );

  it('the pinned backend is killed → 200/200 OK from live backends, each with a new token; back → new sessions reach it', async () => {
    const victim = backends[0]!;
    // A session pinned to the backend about to be killed (new sessions follow round robin).
    let first = await call();
    for (let i = 0; i < 30 && first.instance !== victim.name; i++) first = await call();
    expect(first).toMatchObject({ code: 0, instance: victim.name });
    const token = first.token;
    expect(token).toBeDefined();
    // The session holds while the backend lives.
    expect((await call(token)).instance).toBe(victim.name);

    await victim.close();
    const live = new Map(backends.filter((b) => b !== victim).map((b) => [b.name, b]));
    const codes = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const a = await call(token);
      codes.set(a.code, (codes.get(a.code) ?? 0) + 1);
      const servedBy = live.get(a.instance);
      expect(servedBy, `call ${i}: status ${a.code} from "${a.instance}"`).toBeDefined();
      const moved = openSessionToken(a.token ?? '', KEYS, RULE, Math.floor(Date.now() / 1000));
      expect(moved.ok && moved.endpoint).toBe(`${servedBy!.address}:${servedBy!.port}`);
    }
    expect(Object.fromEntries(codes)).toEqual({ 0: 200 });

    // Back on the same address and port: once its ejection ends, new sessions reach it.
    restarted.push(await startGrpcBackend({ address: victim.address, port: victim.port, name: victim.name }));
    await within(30_000, async () => (await call()).instance === victim.name, 50);
  }, 90_000);
});
