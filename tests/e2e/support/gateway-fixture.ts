// Gateway-mode end-to-end fixtures: Gateway API YAML for backends a test started (each
// instance its own EndpointSlice, as their ports are picked by the kernel), written to a
// temporary configuration directory, and a local gateway (Envoy + control service) on it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningBackend } from '../../../backends/running-backend.js';
import {
  type LocalGateway,
  type LocalGatewayOptions,
  startLocalGateway,
} from '../../../extproc/src/local/local-gateway.js';
import { FileProvider } from '../../../extproc/src/provider/file.js';

/** A fixed test key (32 bytes of 9, base64): gateway tests do not depend on key handling. */
export const TEST_SESSION_KEY = Buffer.alloc(32, 9).toString('base64');
/** The Gateway listener port the fixtures declare; tests bind it elsewhere (listenerPorts). */
export const GATEWAY_PORT = 10000;

export function gatewayYaml(port = GATEWAY_PORT): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: ${port} }
`;
}

/** A Service whose port 80 targets the named port `app` of each instance, one EndpointSlice per instance. */
export function serviceYaml(
  name: string,
  instances: readonly RunningBackend[],
  appProtocol?: string,
): string {
  const docs = [
    `apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec:
  ports: [{ name: app, port: 80, targetPort: app${appProtocol ? `, appProtocol: ${appProtocol}` : ''} }]
`,
  ];
  instances.forEach((b, i) => {
    docs.push(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-${i}, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
ports: [{ name: app, port: ${b.port} }]
endpoints: [{ addresses: ['${b.address}'] }]
`);
  });
  return docs.join('---\n');
}

export class ConfigDir {
  readonly path = mkdtempSync(join(tmpdir(), 'steadfast-e2e-config-'));

  write(file: string, ...documents: string[]): void {
    writeFileSync(join(this.path, file), documents.join('---\n'));
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** A test gateway's options: `config`'s files, every port chosen by the system, the test key, quiet. */
export function testGatewayOptions(config: ConfigDir, debounceMs = 50): LocalGatewayOptions {
  return {
    provider: new FileProvider({ paths: [config.path] }),
    address: '127.0.0.1',
    adminPort: 0,
    envoyAdminPort: 0,
    sessionKeys: [TEST_SESSION_KEY],
    listenerPorts: { [GATEWAY_PORT]: 0 },
    debounceMs,
    log: () => undefined,
  };
}

export async function startTestGateway(
  config: ConfigDir,
  debounceMs = 50,
  log: (line: string) => void = () => undefined,
): Promise<LocalGateway> {
  return startLocalGateway({ ...testGatewayOptions(config, debounceMs), debug: true, log });
}

/** The URL of the gateway's one listener. */
export function gatewayUrl(gateway: LocalGateway): string {
  return gateway.envoy.url();
}

/** A port that was free a moment ago (for processes that cannot be told to use port 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once the gateway has written `generation` (or later) for Envoy, plus a moment to load it. */
export async function appliedAtLeast(
  gateway: LocalGateway,
  generation: number,
  settleMs = 500,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (gateway.appliedGeneration < generation) {
    if (Date.now() > deadline) throw new Error(`generation ${generation} was never applied`);
    await new Promise((r) => setTimeout(r, 25));
  }
  await new Promise((r) => setTimeout(r, settleMs));
}

/** `name=value` of the cookie `name` among a response's Set-Cookie headers, ready for a Cookie header. */
export function cookieOf(setCookie: string | string[] | undefined, name: string): string | undefined {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  return all.map((c) => new RegExp(`^(${name}=[^;]+)`).exec(c)?.[1]).find((c) => c !== undefined);
}
