// One scenario table, both ways to run steadfast (docs/architecture.md, "Two modes, one policy"): the same
// Gateway API objects served by gateway mode (the local gateway `steadfast dev` runs:
// generated Envoy configuration, policy in route metadata) or by attach mode (the real
// `steadfast serve` plus envoy/attach-example.yaml, policy over ext_proc). Both put the
// three echo backends on 127.0.0.2–4 behind one Service, with one attempt ledger.
import { AttemptLedger } from '../../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../../backends/running-backend.js';
import type { EnvoyProcess } from '../../../extproc/src/local/envoy-process.js';
import { startLocalGateway } from '../../../extproc/src/local/local-gateway.js';
import { type AttachRoute, baseObjectsYaml, configDir, routesYaml } from './attach-config.js';
import { BACKEND_ADDRESSES, startAttachStack } from './attach-stack.js';
import { TEST_SESSION_KEY } from './gateway-fixture.js';
import type { FilterBuildName } from '../../support/filter-builds.js';
import { FileProvider } from '../../../extproc/src/provider/file.js';

/**
 * `gateway`: gateway mode with the native filter (what it runs by default); `gateway-wasm`:
 * the same with steadfast.wasm. `attach`: attach mode with steadfast.wasm (its default) and
 * the answer cache; `attach-native`: the same with the native filter; `attach-uncached`: the
 * wasm with the answer cache off (every request asks ext_proc).
 */
export type ModeName = 'gateway' | 'gateway-wasm' | 'attach' | 'attach-native' | 'attach-uncached';
export const MODES: readonly ModeName[] = [
  'gateway',
  'gateway-wasm',
  'attach',
  'attach-native',
  'attach-uncached',
];

/** Whether `mode` is gateway mode, with either build of the filter. */
export function isGatewayMode(mode: ModeName): boolean {
  return mode === 'gateway' || mode === 'gateway-wasm';
}

export interface ModeStack {
  readonly mode: ModeName;
  /** The build of the filter Envoy runs. */
  readonly build: FilterBuildName;
  /** `http://host:port` of the listener the routes attach to. */
  readonly url: string;
  readonly envoy: EnvoyProcess;
  readonly backends: readonly RunningBackend[];
  stop(): Promise<void>;
}

/** The Gateway listener port the shared objects declare (bound elsewhere by the test). */
const LISTENER_PORT = 10000;

async function startGatewayMode(
  routes: readonly AttachRoute[] | string,
  build: FilterBuildName,
): Promise<ModeStack> {
  const ledger = new AttemptLedger();
  const backends: RunningBackend[] = [];
  for (const address of BACKEND_ADDRESSES) {
    backends.push(
      await startEchoBackend({ address, port: backends[0]?.port ?? 0, name: `gw-${address}`, ledger }),
    );
  }
  const dir = configDir({
    'base.yaml': baseObjectsYaml(backends, backends[0]!.port),
    'routes.yaml': typeof routes === 'string' ? routes : routesYaml(routes),
  });
  try {
    const gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [dir.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: { [LISTENER_PORT]: 0 },
      debug: true,
      filter: build,
      debounceMs: 50,
      log: () => undefined,
    });
    return {
      mode: build === 'native' ? 'gateway' : 'gateway-wasm',
      build,
      url: gateway.envoy.url(),
      envoy: gateway.envoy,
      backends,
      stop: async () => {
        await gateway.stop();
        await Promise.all(backends.map((b) => b.close()));
        dir.remove();
      },
    };
  } catch (e) {
    await Promise.all(backends.map((b) => b.close()));
    dir.remove();
    throw e;
  }
}

async function startAttachMode(
  routes: readonly AttachRoute[] | string,
  answerCache: boolean,
  build: FilterBuildName,
): Promise<ModeStack> {
  // The attach snippet carries the operator's session keys in the filter configuration.
  const filterConfig = JSON.stringify({
    policySource: 'metadata',
    sessionKeys: [TEST_SESSION_KEY],
    debug: true,
  });
  // At the example's shipped message_timeout (0.2 s), as users run it.
  const stack = await startAttachStack({
    routes,
    filterConfig,
    ...(answerCache ? {} : { answerCache: false }),
    build,
  });
  return {
    mode: !answerCache ? 'attach-uncached' : build === 'native' ? 'attach-native' : 'attach',
    build,
    url: stack.url,
    envoy: stack.envoy,
    backends: stack.backends,
    stop: () => stack.stop(),
  };
}

/** Starts `mode` serving `routes` (rules, or HTTPRoute YAML attached to Gateway `edge`). */
export function startMode(mode: ModeName, routes: readonly AttachRoute[] | string): Promise<ModeStack> {
  if (isGatewayMode(mode)) return startGatewayMode(routes, mode === 'gateway' ? 'native' : 'wasm');
  return startAttachMode(routes, mode !== 'attach-uncached', mode === 'attach-native' ? 'native' : 'wasm');
}
