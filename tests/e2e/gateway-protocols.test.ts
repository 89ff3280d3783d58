// GEP-1911 through the gateway, end to end: a real Envoy configured by steadfast's gateway
// mode, the compiled filter, and backends on loopback. An h2c backend is reached from
// HTTP/1.1 and from h2c clients; a GRPCRoute reaches the gRPC backend (grpcurl, with server
// reflection); WebSocket text and binary frames come back through the gateway; and an
// unsupported appProtocol is reported by `steadfast validate`.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import { startGrpcBackend } from '../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { grpcurlBinary } from '../../extproc/src/local/envoy-binary.js';
import type { LocalGateway } from '../../extproc/src/local/local-gateway.js';
import { steadfastBin } from '../support/paths.js';
import { curl } from './support/curl.js';
import {
  ConfigDir,
  gatewayUrl,
  gatewayYaml,
  serviceYaml,
  startTestGateway,
} from './support/gateway-fixture.js';
import { grpcurlEcho } from './support/grpcurl.js';

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: protocols }
spec:
  parentRefs: [{ name: gw }]
  # An HTTPRoute and a GRPCRoute may not share a hostname on one listener.
  hostnames: [web.test]
  rules:
    - matches: [{ path: { value: /h2c } }]
      backendRefs: [{ name: echo-h2c, port: 80 }]
    - matches: [{ path: { value: /plain } }]
      backendRefs: [{ name: echo-plain, port: 80 }]
    - matches: [{ path: { value: /ws } }]
      backendRefs: [{ name: echo-ws, port: 80 }]
    - matches: [{ path: { value: /half } }]
      backendRefs:
        - { name: echo-plain, port: 80, weight: 1 }
        - { name: pigeon, port: 80, weight: 1 }
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: grpc }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [grpc.test]
  rules:
    - backendRefs: [{ name: grpc-echo, port: 80 }]
`;

const WEB = { headers: { host: 'web.test' } };

interface EchoReport {
  instance: string;
  protocol: string;
  path: string;
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [steadfastBin(), ...args], (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('gateway mode: backend protocols (GEP-1911)', () => {
  const config = new ConfigDir();
  let echo: RunningBackend;
  let grpc: RunningBackend;
  let gateway: LocalGateway;
  let url: string;

  beforeAll(async () => {
    echo = await startEchoBackend({ address: '127.0.0.2', name: 'proto-echo' });
    grpc = await startGrpcBackend({ address: '127.0.0.3', name: 'proto-grpc' });
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      serviceYaml('echo-h2c', [echo], 'kubernetes.io/h2c'),
      serviceYaml('echo-plain', [echo]),
      serviceYaml('echo-ws', [echo], 'kubernetes.io/ws'),
      serviceYaml('grpc-echo', [grpc]),
      serviceYaml('pigeon', [echo], 'example.com/carrier-pigeon'),
    );
    config.write('routes.yaml', ROUTES);
    gateway = await startTestGateway(config);
    url = gatewayUrl(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([echo?.close(), grpc?.close()]);
    config.remove();
  });

  it('reaches an h2c backend over HTTP/2 from an HTTP/1.1 client', async () => {
    const res = await curl(`${url}/h2c/one`, ['--http1.1', '-H', 'Host: web.test']);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as EchoReport;
    expect(body.protocol).toBe('HTTP/2');
    expect(body.path).toBe('/h2c/one');
  });

  it('reaches an h2c backend from curl --http2-prior-knowledge', async () => {
    const res = await curl(`${url}/h2c/two`, ['--http2-prior-knowledge', '-H', 'Host: web.test']);
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as EchoReport).protocol).toBe('HTTP/2');
  });

  it('speaks HTTP/1.1 to a backend without appProtocol, whatever the client speaks', async () => {
    const res = await curl(`${url}/plain/x`, ['--http2-prior-knowledge', '-H', 'Host: web.test']);
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as EchoReport).protocol).toBe('HTTP/1.1');
  });

  it('answers 500 for the share of requests an unsupported backend would have had', async () => {
    const statuses = new Map<number, number>();
    for (let i = 0; i < 40; i++) {
      const res = await curl(`${url}/half/${i}`, ['-H', 'Host: web.test']);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect([...statuses.keys()].sort()).toEqual([200, 500]);
    expect(statuses.get(500)).toBeGreaterThanOrEqual(10);
    expect(statuses.get(200)).toBeGreaterThanOrEqual(10);
  });

  it('routes a GRPCRoute to the gRPC backend (grpcurl)', async () => {
    const r = await grpcurlEcho(
      `${gatewayUrl(gateway).replace('http://', '')}`,
      'steadfast.test.v1.Echo/Echo',
      { message: 'through the gateway' },
      ['-authority', 'grpc.test'],
    );
    expect(r.stderr).toBe('');
    expect(r.ok).toBe(true);
    const reply = JSON.parse(r.stdout) as { message: string; instance: string };
    expect(reply).toMatchObject({ message: 'through the gateway', instance: 'proto-grpc' });
  });

  it('serves gRPC server reflection through the gateway (grpcurl list)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        grpcurlBinary(),
        ['-plaintext', '-max-time', '10', '-authority', 'grpc.test', url.replace('http://', ''), 'list'],
        (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    expect(out.split('\n')).toContain('steadfast.test.v1.Echo');
  });

  it('echoes WebSocket text and binary frames through the gateway', async () => {
    const ws = new WebSocket(`${url.replace('http://', 'ws://')}/ws`, WEB);
    const received: Array<{ data: Buffer; binary: boolean }> = [];
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data: Buffer, binary: boolean) => {
        received.push({ data, binary });
        if (received.length === 2) resolve();
      }),
    );
    ws.send('hello, gateway');
    ws.send(Buffer.from([0, 1, 2, 253, 254, 255]), { binary: true });
    await done;
    ws.close();
    expect(received[0]).toEqual({ data: Buffer.from('hello, gateway'), binary: false });
    expect(received[1]).toEqual({ data: Buffer.from([0, 1, 2, 253, 254, 255]), binary: true });
  });

  it('refuses the WebSocket upgrade on a route whose backend did not ask for it', async () => {
    const ws = new WebSocket(`${url.replace('http://', 'ws://')}/plain/ws`, WEB);
    const outcome = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('open'));
      ws.once('unexpected-response', (_req, res) => resolve(`status ${res.statusCode}`));
      ws.once('error', (e) => resolve(`error ${e.message}`));
    });
    ws.terminate();
    expect(outcome).not.toBe('open');
  });
});

describe('steadfast validate: unsupported backend protocols', () => {
  const config = new ConfigDir();
  afterAll(() => config.remove());

  it('reports ResolvedRefs=False with reason UnsupportedProtocol', async () => {
    const fake = { address: '127.0.0.2', port: 8080 } as RunningBackend;
    config.write('gateway.yaml', gatewayYaml());
    config.write(
      'services.yaml',
      serviceYaml('pigeon', [fake], 'example.com/carrier-pigeon'),
      serviceYaml('wss-without-tls', [fake], 'kubernetes.io/wss'),
    );
    config.write(
      'routes.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: odd }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { value: /pigeon } }]
      backendRefs: [{ name: pigeon, port: 80 }]
    - matches: [{ path: { value: /wss } }]
      backendRefs: [{ name: wss-without-tls, port: 80 }]
`,
    );
    const r = await run(['validate', config.path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ResolvedRefs=False \(UnsupportedProtocol\)/);
    expect(r.stdout).toContain('example.com/carrier-pigeon');
    expect(r.stdout).toContain('kubernetes.io/wss');
  });
});
