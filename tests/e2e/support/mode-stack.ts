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
import { FileProvider } from '../../../extproc/src/provider/file.js';

/** `attach-uncached`: attach mode with the answer cache off (every request asks ext_proc). */
export type ModeName = 'gateway' | 'attach' | 'attach-uncached';
export const MODES: readonly ModeName[] = ['gateway', 'attach', 'attach-uncached'];

export interface ModeStack {
  readonly mode: ModeName;
  /** `http://host:port` of the listener the routes attach to. */
  readonly url: string;
  readonly envoy: EnvoyProcess;
  readonly backends: readonly RunningBackend[];
  stop(): Promise<void>;
}

/** The Gateway listener port the shared objects declare (bound elsewhere by the test). */
const LISTENER_PORT = 10000;

async function startGatewayMode(routes: readonly AttachRoute[] | string): Promise<ModeStack> {
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
      debounceMs: 50,
      log: () => undefined,
    });
    return {
      mode: 'gateway',
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
  });
  return {
    mode: answerCache ? 'attach' : 'attach-uncached',
    url: stack.url,
    envoy: stack.envoy,
    backends: stack.backends,
    stop: () => stack.stop(),
  };
}

/** Starts `mode` serving `routes` (rules, or HTTPRoute YAML attached to Gateway `edge`). */
export function startMode(mode: ModeName, routes: readonly AttachRoute[] | string): Promise<ModeStack> {
  return mode === 'gateway' ? startGatewayMode(routes) : startAttachMode(routes, mode === 'attach');
}
