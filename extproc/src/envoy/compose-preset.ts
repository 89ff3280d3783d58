// The gateway configuration `docker compose up` runs (compose.yaml mounts it as
// envoy/compose.yaml). Envoy runs in /steadfast with the filter mounted at
// filter/build/steadfast.wasm — the repository's own layout, so the file is also checked
// with `envoy --mode validate` from the repository root.
import type { GatewayConfigOptions } from './gateway-config.js';

/**
 * A PUBLISHED demo key ("steadfast-docker-compose-demo-k!"): anyone can forge session tokens
 * sealed with it. Generate your own (`openssl rand -base64 32`) for anything but the demo.
 */
export const COMPOSE_DEMO_SESSION_KEY = Buffer.from('steadfast-docker-compose-demo-k!').toString('base64');

export const COMPOSE_CONFIG_FILES = [
  'examples/quickstart/gateway.yaml',
  'examples/quickstart/routes.yaml',
  'examples/compose/services.yaml',
] as const;

export const COMPOSE_HEADER = `Generated for docker compose (compose.yaml) from ${COMPOSE_CONFIG_FILES.join(', ')}.
Do not edit: regenerate with \`npm run compose:config\`.
The session key below is a published demo key: never use this file outside the demo.`;

export function composeGatewayOptions(sessionKeys: readonly string[]): GatewayConfigOptions {
  return {
    // Inside the container: reachable through the ports compose publishes.
    address: '0.0.0.0',
    admin: { address: '0.0.0.0', port: 9901 },
    wasmPath: 'filter/build/steadfast.wasm',
    sessionKeys: sessionKeys.length > 0 ? sessionKeys : [COMPOSE_DEMO_SESSION_KEY],
    debug: true,
  };
}
