// Ports and processes, as a user meets them: a second `steadfast dev` (or quickstart, or
// serve) on a port already taken stops with one line naming it and exit code 3, while the
// first keeps serving every connection; and whatever ends a command — Ctrl-C, SIGTERM or
// SIGKILL — no Envoy and no temporary directory outlives it. Each command runs with its own
// TMPDIR, so "nothing left behind" is an empty directory and no process naming it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { CliProcess, eventually, processesMentioning } from './support/cli-process.js';
import { ConfigDir, freePort, gatewayYaml, serviceYaml } from './support/gateway-fixture.js';

const DEV_READY = /steadfast dev: ready; gateway (\S+); Envoy admin (\S+); control service admin (\S+)/;
const KEY = Buffer.alloc(32, 4).toString('base64');

/** One GET on a new connection (no keep-alive): SO_REUSEPORT would split connections, not requests. */
function getOnNewConnection(url: string): Promise<{ status: number; instance: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, instance: res.headers['x-backend-instance'] as string }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

function privateTmp(): string {
  return mkdtempSync(join(tmpdir(), 'steadfast-cli-tmp-'));
}

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: web, port: 80 }]
`;

describe('two steadfast dev on one port; SIGKILL of dev', () => {
  const config = new ConfigDir();
  const keyDir = privateTmp();
  const tmpA = privateTmp();
  const tmpB = privateTmp();
  let backend: RunningBackend;
  let port: number;
  let first: CliProcess;
  let ready: RegExpExecArray;

  const devArgs = (): string[] => [
    'dev',
    '--config',
    config.path,
    '--admin-port',
    '0',
    '--envoy-admin-port',
    '0',
    '--session-key-file',
    join(keyDir, 'keys'),
  ];

  beforeAll(async () => {
    writeFileSync(join(keyDir, 'keys'), `${KEY}\n`);
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'first-dev' });
    port = await freePort();
    config.write('gateway.yaml', gatewayYaml(port));
    config.write('services.yaml', serviceYaml('web', [backend]));
    config.write('routes.yaml', ROUTE);
    first = new CliProcess(devArgs(), { TMPDIR: tmpA });
    ready = await first.waitFor(DEV_READY);
  });

  afterAll(async () => {
    first?.kill();
    await backend?.close();
    config.remove();
    for (const d of [keyDir, tmpA, tmpB]) rmSync(d, { recursive: true, force: true });
  });

  it('the second exits 3 with one line naming the address and port, and starts no Envoy', async () => {
    const second = new CliProcess(devArgs(), { TMPDIR: tmpB });
    const { code } = await second.exit;
    expect(code).toBe(3);
    const lines = second.output.split('\n').filter((l) => l.includes('cannot listen'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${port} is in use`);
    expect(lines[0]).toContain('Gateway listener');
    expect(second.output).not.toContain('ready');
    expect(readdirSync(tmpB)).toEqual([]);
    expect(processesMentioning(tmpB)).toEqual([]);
  });

  it('the first still serves every connection', async () => {
    expect(ready[1]).toBe(`http://127.0.0.1:${port}`);
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push(await getOnNewConnection(`${ready[1]}/hello`));
    expect(answers.filter((a) => a.status === 200 && a.instance === 'first-dev')).toHaveLength(30);
  });

  it('SIGKILL of dev leaves no Envoy and nothing in its temporary directory', async () => {
    // While it runs, its Envoy and files are there (the test would pass vacuously otherwise).
    expect(processesMentioning(tmpA).length).toBeGreaterThan(0);
    expect(readdirSync(tmpA).length).toBeGreaterThan(0);
    first.kill('SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');
    expect(await eventually(() => processesMentioning(tmpA).length === 0, 8000)).toBe(true);
    expect(await eventually(() => readdirSync(tmpA).length === 0, 2000)).toBe(true);
    await expect(getOnNewConnection(`${ready[1]}/hello`)).rejects.toThrow();
  });
});

describe('steadfast quickstart with its own configuration: ports first, Ctrl-C cleans up', () => {
  const config = new ConfigDir();
  const tmpA = privateTmp();
  const tmpB = privateTmp();
  let first: CliProcess;
  let port: number;
  let backendPort: number;

  beforeAll(async () => {
    port = await freePort();
    backendPort = await freePort();
    config.write('gateway.yaml', gatewayYaml(port));
    config.write(
      'services.yaml',
      `apiVersion: v1
kind: Service
metadata: { name: web }
spec:
  ports: [{ name: app, port: 80, targetPort: app }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-1, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
ports: [{ name: app, port: ${backendPort} }]
endpoints: [{ addresses: ['127.0.0.1'] }]
`,
    );
    config.write('routes.yaml', ROUTE);
    first = new CliProcess(
      ['quickstart', '--config', config.path, '--admin-port', '0', '--envoy-admin-port', '0'],
      { TMPDIR: tmpA },
    );
    await first.waitFor(/Ctrl-C stops everything/);
  });

  afterAll(() => {
    first?.kill();
    config.remove();
    for (const d of [tmpA, tmpB]) rmSync(d, { recursive: true, force: true });
  });

  it('a second quickstart names the gateway port, not a demo backend, and exits 3', async () => {
    const second = new CliProcess(
      ['quickstart', '--config', config.path, '--admin-port', '0', '--envoy-admin-port', '0'],
      { TMPDIR: tmpB },
    );
    expect((await second.exit).code).toBe(3);
    expect(second.output).toMatch(new RegExp(`cannot listen: 127\\.0\\.0\\.1:${port} is in use`));
    expect(second.output).not.toContain(`:${backendPort}`);
  });

  it('Ctrl-C (SIGINT) stops Envoy and the backends and removes every temporary file', async () => {
    const res = await getOnNewConnection(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    first.kill('SIGINT');
    expect((await first.exit).code).toBe(0);
    expect(processesMentioning(tmpA)).toEqual([]);
    expect(readdirSync(tmpA)).toEqual([]);
    await expect(getOnNewConnection(`http://127.0.0.1:${backendPort}/`)).rejects.toThrow();
  });
});
