// Attach mode honours Gateway listeners, as gateway mode does: one Gateway with two
// listeners whose routes differ for the same host and path (web: a retry, no session; rpc:
// a cookie session), an operator's Envoy written around the generated snippet with four
// listeners — on the two Gateway ports, one that declares the rpc port in its metadata, and
// one that nothing ties to a Gateway port — and the same objects in gateway mode.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { run } from '../../extproc/src/cli/main.js';
import { startEnvoy, type EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { startLocalGateway } from '../../extproc/src/local/local-gateway.js';
import { REPO_ROOT, filterWasm } from '../support/paths.js';
import { type ConfigDir, configDir } from './support/attach-config.js';
import { untilExtProcAnswers, within } from './support/attach-stack.js';
import { startControlService, type ControlServiceHandle } from './support/control-service.js';
import { type CurlResponse, curl } from './support/curl.js';
import { freePort } from './support/free-port.js';
import { TEST_SESSION_KEY } from './support/gateway-fixture.js';
import { POLICY_HEADER, oneWithPolicy } from './support/with-policy.js';
import { FileProvider } from '../../extproc/src/provider/file.js';

type Node = Record<string, unknown>;
const HOST = 'shop.example';
const WEB = 'httproute/default/web/rule/0';
const RPC = 'httproute/default/rpc/rule/0';
const BOTH = 'httproute/default/both/rule/0';

/** tests/resolve/testdata/two-listeners.yaml on the given ports, with the backend's endpoint. */
function objects(webPort: number, rpcPort: number, backend: RunningBackend): string {
  const text = readFileSync(join(REPO_ROOT, 'tests/resolve/testdata/two-listeners.yaml'), 'utf8')
    .replace('port: 8080 }', `port: ${webPort} }`)
    .replace('port: 9090 }', `port: ${rpcPort} }`);
  return `${text}---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: default, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
ports: [{ name: http, port: ${backend.port} }]
endpoints:
  - addresses: ['${backend.address}']
`;
}

async function snippet(args: readonly string[]): Promise<Node> {
  let out = '';
  const code = await run(['envoy-config', '--mode', 'attach', ...args], {
    out: (t) => (out += t),
    err: () => undefined,
  });
  expect(code).toBe(0);
  return parse(out) as Node;
}

/** An operator's listener: their own route to their own cluster, the snippet's parts added. */
function listener(s: Node, name: string, port: number, metadata?: unknown): Node {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    ...(metadata ? { metadata } : {}),
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type':
                'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              // One prefix for all four: the readiness wait reads http.ingress.ext_proc.*.
              stat_prefix: 'ingress',
              route_config: {
                ...(s['route_config'] as Node),
                virtual_hosts: [
                  {
                    name: 'shop',
                    domains: [HOST],
                    routes: [
                      {
                        match: { prefix: '/' },
                        route: { cluster: 'app', retry_policy: s['route_retry_policy'] },
                      },
                    ],
                  },
                ],
              },
              http_filters: [...(s['http_filters'] as Node[]), s['router']],
            },
          },
        ],
      },
    ],
  };
}

interface Got {
  readonly rule: string | undefined;
  readonly cookie: boolean;
}

const send = (url: string, path: string): Promise<CurlResponse> =>
  curl(`${url}${path}`, ['-H', `Host: ${HOST}`]);

function got(res: CurlResponse): Got {
  expect(res.status).toBe(200);
  const token = res.headers.get(POLICY_HEADER)?.[0];
  return {
    rule: token === undefined ? undefined : /id=([^;]+)/.exec(token)?.[1],
    cookie: (res.headers.get('set-cookie') ?? []).some((c) => c.startsWith('rpc-session=')),
  };
}

/** The rule a request got (from the policy header) and whether it started the rpc session. */
async function policyOf(url: string, path: string): Promise<Got> {
  return got(await send(url, path));
}

/**
 * policyOf for a request that gets a rule in attach mode: one whose ext_proc answer came too
 * late went on without any, and is sent again (support/with-policy.ts).
 */
async function ruleOf(envoy: EnvoyProcess, url: string, path: string): Promise<Got> {
  const policy = (r: CurlResponse) => r.headers.has(POLICY_HEADER);
  return got(await oneWithPolicy({ mode: 'attach', envoy }, () => send(url, path), policy));
}

describe.each([
  ['one process', []],
  // The cases a worker process sees reach the primary's log and /v1/status.
  ['--workers 2', ['--workers', '2']],
])(
  'attach mode (%s): a request gets the routes of its own Gateway listener',
  (_what, serveArgs: string[]) => {
    let backend: RunningBackend;
    let dir: ConfigDir;
    let control: ControlServiceHandle;
    let envoy: EnvoyProcess;
    let webPort: number;
    let rpcPort: number;

    beforeAll(async () => {
      backend = await startEchoBackend({ address: '127.0.0.2', name: 'listeners' });
      webPort = await freePort();
      rpcPort = await freePort();
      dir = configDir({ 'objects.yaml': objects(webPort, rpcPort, backend) });
      control = await startControlService([
        'serve',
        '--config',
        dir.path,
        '--ext-proc-address',
        '127.0.0.1:0',
        '--admin-port',
        '0',
        ...serveArgs,
      ]);
      const s = await snippet([
        '--config',
        dir.path,
        '--ext-proc-address',
        control.grpcAddress,
        '--wasm-path',
        filterWasm(),
        '--session-key-file',
        'examples/attach/sample-session-keys.txt',
        '--debug',
      ]);
      const declared = (s['listener_metadata'] as Node[]).find((m) => m['gateway_port'] === rpcPort) as Node;
      const config = {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        layered_runtime: s['layered_runtime'],
        static_resources: {
          listeners: [
            listener(s, 'web', webPort),
            listener(s, 'rpc', rpcPort),
            // Bound elsewhere, standing for the rpc port by its metadata.
            listener(s, 'declared', 0, declared['metadata']),
            // Bound elsewhere, without metadata: nothing tells which Gateway port it stands for.
            listener(s, 'untold', 0),
          ],
          clusters: [
            {
              name: 'app',
              type: 'STATIC',
              load_assignment: {
                cluster_name: 'app',
                endpoints: [
                  {
                    lb_endpoints: [
                      {
                        endpoint: {
                          address: { socket_address: { address: backend.address, port_value: backend.port } },
                        },
                      },
                    ],
                  },
                ],
              },
            },
            ...(s['clusters'] as Node[]),
          ],
        },
      };
      envoy = await startEnvoy({ config: stringify(config) });
      await untilExtProcAnswers(envoy, envoy.url('web'));
    }, 90_000);

    afterAll(async () => {
      await envoy?.stop();
      await control?.stop();
      await backend?.close();
      dir?.remove();
    });

    it("matches on each Gateway port's own listener only that port's routes", async () => {
      expect(await ruleOf(envoy, envoy.url('web'), '/api')).toEqual({ rule: WEB, cookie: false });
      expect(await ruleOf(envoy, envoy.url('rpc'), '/api')).toEqual({ rule: RPC, cookie: true });
      expect(await ruleOf(envoy, envoy.url('web'), '/shared')).toEqual({ rule: BOTH, cookie: false });
      expect(await ruleOf(envoy, envoy.url('rpc'), '/shared')).toEqual({ rule: BOTH, cookie: false });
    });

    it('takes a listener on another port at its metadata', async () => {
      expect(await ruleOf(envoy, envoy.url('declared'), '/api')).toEqual({ rule: RPC, cookie: true });
    });

    it('gives a listener it cannot tell only what every port agrees on, and says so', async () => {
      expect(await policyOf(envoy.url('untold'), '/api')).toEqual({ rule: undefined, cookie: false });
      expect(await ruleOf(envoy, envoy.url('untold'), '/shared')).toEqual({ rule: BOTH, cookie: false });
      const untoldPort = Number(new URL(envoy.url('untold')).port);
      const status = (await (await fetch(`${control.adminUrl}/v1/status`)).json()) as {
        listeners: { ports: number[]; problems: { kind: string; port?: number; message: string }[] };
      };
      expect(status.listeners.ports).toEqual([webPort, rpcPort].sort((a, b) => a - b));
      expect(status.listeners.problems).toEqual([
        expect.objectContaining({ kind: 'unknown-port', port: untoldPort }),
      ]);
      // The log line is written before the answer; its pipe may bring it a moment later.
      await within(5_000, async () =>
        control.output().includes(`listener: requests arrive on Envoy port ${untoldPort}`),
      );
      const metrics = await (await fetch(`${control.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^steadfast_extproc_listener_total\{by="metadata"\} [1-9]/m);
      expect(metrics).toMatch(/^steadfast_extproc_listener_total\{by="destination_port"\} [1-9]/m);
      expect(metrics).toMatch(/^steadfast_extproc_listener_total\{by="unknown"\} [1-9]/m);
    });
  },
);

describe('gateway mode: the same objects', () => {
  let backend: RunningBackend;
  let dir: ConfigDir;
  let gateway: Awaited<ReturnType<typeof startLocalGateway>>;

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'listeners-gw' });
    // Gateway ports the generated Envoy binds elsewhere (listenerPorts): any two will do.
    dir = configDir({ 'objects.yaml': objects(8080, 9090, backend) });
    gateway = await startLocalGateway({
      provider: new FileProvider({ paths: [dir.path] }),
      address: '127.0.0.1',
      adminPort: 0,
      envoyAdminPort: 0,
      sessionKeys: [TEST_SESSION_KEY],
      listenerPorts: { 8080: 0, 9090: 0 },
      debug: true,
      log: () => undefined,
    });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    dir?.remove();
  });

  it('serves each listener its own routes: the session only on the rpc port', async () => {
    const web = gateway.envoy.url('gateway/default/edge/listener/web');
    const rpc = gateway.envoy.url('gateway/default/edge/listener/rpc');
    expect((await policyOf(web, '/api')).cookie).toBe(false);
    expect((await policyOf(rpc, '/api')).cookie).toBe(true);
  });
});
