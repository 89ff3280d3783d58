// `serve --envoy-files DIR`: a gateway-mode Envoy that runs elsewhere (docker compose's Envoy
// container) reads its bootstrap and every generation's resources from DIR.
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COMPOSE_DEMO_SESSION_KEY, composeGatewayOptions } from '../../envoy/compose-preset.js';
import type { ServedConfig } from '../../server/served-config.js';
import { GatewayFiles } from '../../xds/gateway-files.js';
import type { Runner } from './runner.js';

/**
 * Writes the bootstrap (DIR/envoy.yaml) and the first generation's resources before the control
 * service says ready (compose starts Envoy once it is healthy), then every later generation.
 * The container preset: listeners and Envoy's admin (9901) on 0.0.0.0, the filter at
 * filter/build/steadfast.wasm under Envoy's working directory, the debug header on.
 */
export function envoyFilesRunner(
  directory: string,
  config: ServedConfig,
  envoy: { readonly keys: readonly string[]; readonly upstreamIdleTimeout?: string },
  log: (line: string) => void,
): Runner<void> {
  const { keys, upstreamIdleTimeout } = envoy;
  let unsubscribe: (() => void) | undefined;
  return {
    async start() {
      if (keys.length === 0) {
        log(
          `warning: no --session-keys file; Envoy seals sessions with the PUBLISHED demo key ` +
            `(${COMPOSE_DEMO_SESSION_KEY.slice(0, 8)}…): anyone can forge them. Use it for the demo only.`,
        );
      }
      const options = {
        ...composeGatewayOptions(keys),
        ...(upstreamIdleTimeout !== undefined ? { upstreamIdleTimeout } : {}),
      };
      const files = new GatewayFiles(directory, { envoy: options, log });
      unsubscribe = config.onSwap((snapshot, generation) => {
        void files.apply(snapshot, generation).then((ok) => {
          if (ok) log(`configuration generation ${generation} written for Envoy (${directory})`);
        });
      });
      const first = config.snapshot;
      if (first) await files.apply(first, config.generation);
      const tmp = join(directory, `.envoy.yaml.${process.pid}.tmp`);
      await writeFile(tmp, files.bootstrap());
      await rename(tmp, join(directory, 'envoy.yaml'));
      log(`Envoy bootstrap ${join(directory, 'envoy.yaml')}; its resources follow the configuration`);
    },
    stop: () => unsubscribe?.(),
  };
}
