// The gateway configuration `docker compose up` runs: the control service writes it for the
// Envoy container (`steadfast serve --envoy-files`), which runs in /steadfast with the filter
// mounted at filter/build/ — the repository's own layout, so the same configuration is also
// checked with `envoy --mode validate` from the repository root. Compose's Envoy is the
// pinned version and the image builds the native module, so compose runs the native filter.
import type { GatewayConfigOptions } from './gateway-config.js';

/**
 * A PUBLISHED demo key ("steadfast-docker-compose-demo-k!"): anyone can forge session tokens
 * sealed with it. Generate your own (`openssl rand -base64 32`) for anything but the demo.
 */
export const COMPOSE_DEMO_SESSION_KEY = Buffer.from('steadfast-docker-compose-demo-k!').toString('base64');

/** What compose mounts at /config unless STEADFAST_CONFIG names another directory. */
export const COMPOSE_CONFIG_DIR = 'examples/compose';

export const COMPOSE_HEADER = `What docker compose's Envoy runs (compose.yaml), every resource static, for reading:
compose itself hands Envoy these resources in files that follow the configuration.
The session key below is a published demo key: never use this configuration outside the demo.`;

export function composeGatewayOptions(sessionKeys: readonly string[]): GatewayConfigOptions {
  return {
    // Inside the container: reachable through the ports compose publishes.
    address: '0.0.0.0',
    admin: { address: '0.0.0.0', port: 9901 },
    wasmPath: 'filter/build/libsteadfast.so',
    sessionKeys: sessionKeys.length > 0 ? sessionKeys : [COMPOSE_DEMO_SESSION_KEY],
    debug: true,
  };
}
