// `steadfast quickstart` (what `npm start` runs): the demo backends the quickstart's
// EndpointSlices name, then exactly what `steadfast dev --config examples/quickstart` runs,
// and the curl and grpcurl commands that show each feature.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttemptLedger } from '../../../../backends/attempt-ledger.js';
import { startEchoBackend } from '../../../../backends/echo/start-echo-backend.js';
import { startGrpcBackend } from '../../../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../../../backends/running-backend.js';
import { untilSignalled } from '../../server/control-service.js';
import { createDevAuthority, issueDevCertificate, tlsSecretYaml } from '../../local/dev-certificates.js';
import { grpcurlBinary } from '../../local/envoy-binary.js';
import { gatewayPortNeeds } from '../../local/local-gateway.js';
import { checkPortsFree } from '../../local/port-check.js';
import { projectRoot } from '../../local/project-root.js';
import type { PolicyTable } from '../../policy/policy-table.js';
import { type FlagSpec, type FlagSpecs, type ParsedArgs, flag } from '../args.js';
import { CONFIG, configPathsOf } from '../flags.js';
import { KUBE_API_FLAGS } from '../kube-api-flags.js';
import { LEASE_FLAGS } from '../lease-flags.js';
import type { Command, CommandIO } from '../command.js';
import { readSnapshot } from '../load-snapshot.js';
import { type Runner, RunGroup } from '../run/runner.js';
import { DEV_FLAGS, devSettings, readyLine, startDevGateway } from './dev.js';

const PREFIX = 'steadfast quickstart';

/** The Gateway, Secret and route `steadfast quickstart` adds for HTTPS (`docs/tls.md`). */
const QUICKSTART_TLS_SECRET = 'quickstart-dev-tls';
const QUICKSTART_HTTPS_PORT = 10443;

/**
 * HTTPS for the quickstart, made fresh at every start so no key is ever committed: a development
 * CA and a certificate it signs for localhost and the gateway's address, as a Secret of type
 * kubernetes.io/tls; a Gateway whose HTTPS listener presents it; and the `/cart` cookie-session
 * rule of examples/quickstart attached to it. Kept apart from examples/quickstart, which then
 * validates on its own.
 */
export function quickstartHttps(
  address: string,
  port: number = QUICKSTART_HTTPS_PORT,
): { yaml: string; caCertificate: string } {
  const ca = createDevAuthority('steadfast quickstart development CA', 7);
  const own = /^\d+\.\d+\.\d+\.\d+$/.test(address) && address !== '0.0.0.0' ? [address] : [];
  const pair = issueDevCertificate(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: [...new Set(['127.0.0.1', ...own])],
    days: 7,
  });
  const secret = tlsSecretYaml(
    QUICKSTART_TLS_SECRET,
    'default',
    pair,
    'Made by `steadfast quickstart` for this run only: a development certificate, never for production.',
  );
  const gateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: quickstart-https, namespace: default }
spec:
  gatewayClassName: steadfast
  listeners:
    - name: https
      protocol: HTTPS
      port: ${port}
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, name: ${QUICKSTART_TLS_SECRET} }] }
      allowedRoutes: { kinds: [{ kind: HTTPRoute }] }
`;
  const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop-https, namespace: default }
spec:
  parentRefs: [{ name: quickstart-https }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /cart } }]
      sessionPersistence:
        type: Cookie
        cookie: { name: shop-session, lifetimeType: Permanent }
        absoluteTimeout: 1h
      backendRefs: [{ name: echo, port: 80 }]
`;
  return { yaml: [secret, gateway, route].join('---\n'), caCertificate: ca.certificate };
}

export interface DemoBackend {
  readonly kind: 'echo' | 'grpc';
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/**
 * One backend per loopback endpoint the table names: gRPC where a GRPCRoute sends traffic,
 * echo (HTTP/1.1, h2c and WebSocket on one port) elsewhere. wss needs TLS, which the demo
 * backends do not serve: those endpoints stay dark.
 */
export function demoBackends(table: PolicyTable): DemoBackend[] {
  const found = new Map<
    string,
    { kind: DemoBackend['kind']; services: Set<string>; address: string; port: number }
  >();
  for (const route of table.routes) {
    for (const rule of route.rules) {
      for (const b of rule.backends) {
        if (b.protocol === 'wss' || b.invalid) continue;
        for (const e of b.endpoints) {
          if (e.type !== 'ipv4' || !e.address.startsWith('127.')) continue;
          const key = `${e.address}:${e.port}`;
          const entry = found.get(key) ?? {
            kind: route.kind === 'grpc' ? 'grpc' : 'echo',
            services: new Set<string>(),
            address: e.address,
            port: e.port,
          };
          entry.services.add(b.service);
          found.set(key, entry);
        }
      }
    }
  }
  // Named after the shortest Service that uses it (`echo` rather than `echo-h2c`) and its address.
  return [...found.values()].map((f) => {
    const service = [...f.services].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0] ?? f.kind;
    return {
      kind: f.kind,
      name: `${service}-${f.address.split('.').pop() ?? ''}`,
      address: f.address,
      port: f.port,
    };
  });
}

function tryLines(
  http: string,
  https: { url: string; caFile: string } | undefined,
  grpc: string | undefined,
  grpcurl: string,
  envoyAdmin: string,
): string[] {
  const lines = [
    'Try it (each response says which backend instance answered: x-backend-instance):',
    '',
    '  # Retries (GEP-1731): the first two tries answer 503, the third 200; at least 100 ms apart',
    `  curl -i "${http}/retry?uuid=$RANDOM&succeedAfter=2&responseCode=503"`,
    '  # Timeouts (GEP-1742): the whole request may take 2 s (then 504), each try 500 ms',
    `  curl -i "${http}/retry?delay=3s"`,
    `  curl -i "${http}/retry?uuid=$RANDOM&succeedAfter=1&delayRetry=800ms"   # 1st try times out, retry answers`,
    '  # Cookie session persistence (GEP-1619): the same instance answers every time',
    `  for i in 1 2 3 4; do curl -s -b /tmp/sf-jar -c /tmp/sf-jar -o /dev/null -w '%header{x-backend-instance}\\n' ${http}/cart; done`,
    ...(https
      ? [
          '  # HTTPS (TLS terminated by Envoy, a development certificate made at start): the cookie is Secure',
          `  curl -si --cacert ${https.caFile} ${https.url}/cart | grep -iE '^(HTTP|set-cookie)'`,
        ]
      : []),
    '  # Header session persistence: keep the x-shop-session header you were given and send it back',
    `  T=$(curl -s -D - -o /dev/null ${http}/api | grep -i '^x-shop-session' | cut -d' ' -f2 | tr -d '\\r')`,
    `  for i in 1 2 3 4; do curl -s -o /dev/null -w '%header{x-backend-instance}\\n' -H "x-shop-session: $T" ${http}/api; done`,
    '  # Traffic split 70/30 between echo and echo-canary',
    `  for i in $(seq 100); do curl -s -o /dev/null -w '%header{x-backend-instance}\\n' ${http}/split; done | sort | uniq -c`,
    '  # appProtocol kubernetes.io/h2c: HTTP/2 to the backend ("protocol": "HTTP/2"), HTTP/1.1 or h2c from you',
    `  curl -s ${http}/h2c/hello`,
    `  curl -s --http2-prior-knowledge ${http}/h2c/hello`,
    '  # appProtocol kubernetes.io/ws: WebSocket through the gateway (from the repository root, with its ws package)',
    `  node -e "const ws = new (require('ws'))('${http.replace('http://', 'ws://')}/ws'); ws.on('open', () => ws.send('hello')); ws.on('message', (m) => { console.log('echoed:', String(m)); ws.close(); })"`,
  ];
  if (grpc !== undefined) {
    const target = grpc.replace('http://', '');
    lines.push(
      '  # GRPCRoute with retries on unavailable (GEP-3440); server reflection through the gateway',
      `  ${grpcurl} -plaintext ${target} list`,
      `  ${grpcurl} -plaintext -d '{"message":"hi","uuid":"'$RANDOM'","succeed_after":2}' ${target} steadfast.test.v1.Echo/Echo`,
    );
  }
  lines.push(
    '',
    "  # The filter's counters in Envoy's stats",
    `  curl -s ${envoyAdmin}/stats | grep steadfast`,
    '',
    'Edit examples/quickstart/*.yaml and the gateway follows without a restart. Ctrl-C stops everything.',
  );
  return lines;
}

export const quickstartCommand: Command = {
  usage: 'steadfast quickstart [options]',
  description:
    'Starts the demo backends that the EndpointSlices of the configuration name (loopback\n' +
    'addresses only), then exactly what `steadfast dev` runs, with the filter in debug mode,\n' +
    'and prints the curl and grpcurl commands that show each feature. Ctrl-C stops everything.',
  flags: {
    ...withoutKubernetes(DEV_FLAGS),
    config: {
      ...DEV_FLAGS.config,
      description: CONFIG.description,
      default: 'examples/quickstart',
    } as FlagSpec,
    debug: { ...DEV_FLAGS.debug, default: 'on; --debug=false turns it off' } as FlagSpec,
    'https-port': {
      type: 'string',
      value: 'PORT',
      description:
        'the port of the HTTPS Gateway with a development certificate made at start (added beside the example, or beside --config when given)',
      default: String(QUICKSTART_HTTPS_PORT) + ', only without --config',
    },
  },
  async run(parsed, io) {
    // Beside the example: an HTTPS Gateway with a development certificate made now.
    let tlsDir: string | undefined;
    const own = configPathsOf(parsed);
    const httpsPort = flag(parsed, 'https-port');
    if (own.length === 0 || httpsPort !== undefined) {
      const port = httpsPort === undefined ? QUICKSTART_HTTPS_PORT : Number(httpsPort);
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        io.err(`steadfast quickstart: --https-port: ${httpsPort} is not a port (1-65535)`);
        return 2;
      }
      tlsDir = mkdtempSync(join(tmpdir(), 'steadfast-quickstart-tls-'));
      const https = quickstartHttps(flag(parsed, 'address') ?? '127.0.0.1', port);
      writeFileSync(join(tlsDir, 'https.yaml'), https.yaml, { mode: 0o600 });
      writeFileSync(join(tlsDir, 'ca.pem'), https.caCertificate);
      const base = own.length > 0 ? own : [join(projectRoot(), 'examples', 'quickstart')];
      parsed.flags.set('config', [...base, join(tlsDir, 'https.yaml')]);
    }
    try {
      return await runQuickstart(parsed, io, tlsDir);
    } finally {
      if (tlsDir !== undefined) rmSync(tlsDir, { recursive: true, force: true });
    }
  },
};

async function runQuickstart(parsed: ParsedArgs, io: CommandIO, tlsDir: string | undefined): Promise<number> {
  const settings = await devSettings(parsed, io, PREFIX, { debug: true });

  const { table } = (await readSnapshot(settings.provider)).snapshot;
  // Every port, the demo backends' and the gateway's, before anything starts: a second
  // quickstart must name the gateway's port, not the first backend it tripped over.
  const demo = demoBackends(table);
  await checkPortsFree([
    ...gatewayPortNeeds(table, settings),
    ...demo.map((b) => ({
      address: b.address,
      port: b.port,
      what: `demo backend ${b.name}`,
      remedy: 'stop the process that holds it (another quickstart?), or change its EndpointSlice',
    })),
  ]);
  const group = new RunGroup();
  const backends = await group.start(demoBackendsRunner(demo));
  const running = await startDevGateway(group, settings, io, PREFIX);
  const port = (p: number) => `http://${settings.address}:${p}`;
  const httpListener = table.listeners.find((l) => l.name === 'http') ?? table.listeners[0];
  const grpcListener = table.listeners.find((l) => l.name === 'grpc');
  const httpsListener = table.listeners.find((l) => l.protocol === 'HTTPS');
  let grpcurl = 'grpcurl';
  try {
    grpcurl = grpcurlBinary();
  } catch {
    // grpcurl on PATH, if any.
  }
  // Listen for signals before saying ready: a supervisor may signal as soon as it reads the line.
  const signalled = untilSignalled();
  io.out(readyLine(PREFIX, running));
  io.out(
    [
      `backends: ${backends.map((b) => `${b.name} ${b.address}:${b.port}`).join(', ')}`,
      '',
      ...tryLines(
        port(httpListener?.port ?? 10000),
        httpsListener && tlsDir !== undefined
          ? { url: `https://${settings.address}:${httpsListener.port}`, caFile: join(tlsDir, 'ca.pem') }
          : undefined,
        grpcListener ? port(grpcListener.port) : undefined,
        grpcurl,
        running.gateway.envoy.adminUrl,
      ),
    ].join('\n'),
  );
  await signalled;
  await group.stop();
  io.out(`${PREFIX}: stopped`);
  return 0;
}

/** The demo backends, each on the address its EndpointSlice names, sharing one attempt ledger. */
function demoBackendsRunner(demo: readonly DemoBackend[]): Runner<readonly RunningBackend[]> {
  const backends: RunningBackend[] = [];
  const stop = () => Promise.all(backends.map((b) => b.close())).then(() => undefined);
  return {
    async start() {
      // One ledger: a retry may go to another instance, and "fail the first N attempts" counts across them.
      const ledger = new AttemptLedger();
      try {
        for (const b of demo) {
          const start = b.kind === 'grpc' ? startGrpcBackend : startEchoBackend;
          backends.push(await start({ address: b.address, port: b.port, name: b.name, ledger }));
        }
      } catch (e) {
        await stop();
        throw new Error(`cannot start the demo backends: ${(e as Error).message}`);
      }
      return backends;
    },
    stop,
  };
}

/** quickstart serves its example files: the cluster flags of dev are not its own. */
function withoutKubernetes(flags: FlagSpecs): FlagSpecs {
  const { kubeconfig: _k, 'in-cluster': _i, 'session-key-secret': _s, ...rest } = flags;
  return Object.fromEntries(
    Object.entries(rest).filter(([name]) => !(name in LEASE_FLAGS) && !(name in KUBE_API_FLAGS)),
  );
}
