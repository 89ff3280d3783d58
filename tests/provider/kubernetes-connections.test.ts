// The Kubernetes client's connections: requests and watches go over one kept-alive connection
// with one set of TLS material, and a client certificate rotated on disk is presented by the
// next connection. Against an HTTPS server of the test's own that asks for a client
// certificate (every certificate made here at run time).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../extproc/src/provider/kubernetes/client.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-kube-connections-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A certificate `name` signed by the test CA, for the server (127.0.0.1) or a client. */
function issue(name: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl('req', '-new', ...key, '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  openssl(
    ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'],
    ...['-days', '1', '-extfile', `${name}.ext`, '-out', `${name}.crt`],
  );
}

interface Seen {
  /** TLS connections accepted, and of those, how many resumed a session. */
  connections: number;
  resumed: number;
  /** Per request: the client certificate's CN and the connection's number. */
  requests: { cn: string; connection: number }[];
}

let server: Server;
const seen: Seen = { connections: 0, resumed: 0, requests: [] };
let kubeconfig = '';

beforeAll(async () => {
  openssl(
    'req',
    '-x509',
    ...key,
    '-days',
    '1',
    '-subj',
    '/CN=test ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  issue('server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  for (const c of ['alice', 'bob']) issue(c, 'extendedKeyUsage=clientAuth\n');
  copyFileSync(join(dir, 'alice.crt'), join(dir, 'client.crt'));
  copyFileSync(join(dir, 'alice.key'), join(dir, 'client.key'));
  const read = (f: string) => readFileSync(join(dir, f));
  const ids = new WeakMap<object, number>();
  const servedOn = new WeakMap<object, number>();
  server = createServer(
    { key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const cn = String(socket.getPeerCertificate().subject?.CN ?? '');
      seen.requests.push({ cn, connection: ids.get(socket) ?? 0 });
      const served = (servedOn.get(socket) ?? 0) + 1;
      servedOn.set(socket, served);
      // A kept connection found closed when reused (as a proxy closes idle ones): no answer.
      if (req.url?.startsWith('/stale') && served > 1) return socket.destroy();
      res.setHeader('content-type', 'application/json');
      // A watch: one event, then the server ends it (as at its time limit).
      if (req.url?.includes('watch=1'))
        res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '2' } } })}\n`);
      else if (req.url?.startsWith('/close')) res.setHeader('connection', 'close').end('{}');
      else res.end('{}');
    },
  );
  server.on('secureConnection', (socket: TLSSocket) => {
    ids.set(socket, ++seen.connections);
    if (socket.isSessionReused()) seen.resumed++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:' +
        String(port) +
        '", certificate-authority: ca.crt } }]',
      'users: [{ name: u, user: { client-certificate: client.crt, client-key: client.key } }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('the Kubernetes client keeps its connections', () => {
  it('sends requests and watches over one connection, and resumes the TLS session on a new one', async () => {
    const client = await KubeClient.load(kubeconfig, { qps: -1, burst: 1 });
    try {
      for (let i = 0; i < 5; i++) await client.call('GET', '/api/v1/namespaces');
      const events: string[] = [];
      await client.watch('/api/v1/services', '1', (e) => events.push(e.type)).done;
      expect(events).toEqual(['BOOKMARK']);
      await client.call('PUT', '/apis/x/status', { a: 1 });
      expect(seen.requests.map((r) => r.connection)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(seen.connections).toBe(1);
      // The server closes the connection: the next one resumes the session the first made.
      await client.call('GET', '/close');
      await client.call('GET', '/api/v1/namespaces');
      expect(seen.connections).toBe(2);
      expect(seen.resumed).toBe(1);
    } finally {
      client.close();
    }
  });

  it('presents a client certificate rotated on disk from the next request on, on a new connection', async () => {
    const client = await KubeClient.load(kubeconfig, { qps: -1, burst: 1 });
    const from = seen.requests.length;
    try {
      await client.call('GET', '/api/v1/namespaces');
      await client.call('GET', '/api/v1/namespaces');
      copyFileSync(join(dir, 'bob.crt'), join(dir, 'client.crt'));
      copyFileSync(join(dir, 'bob.key'), join(dir, 'client.key'));
      await client.call('GET', '/api/v1/namespaces');
      await client.call('GET', '/api/v1/namespaces');
      const requests = seen.requests.slice(from);
      expect(requests.map((r) => r.cn)).toEqual(['alice', 'alice', 'bob', 'bob']);
      const [a1, a2, b1, b2] = requests.map((r) => r.connection);
      expect([a1 === a2, b1 === b2, a1 === b1]).toEqual([true, true, false]);
    } finally {
      client.close();
      copyFileSync(join(dir, 'alice.crt'), join(dir, 'client.crt'));
      copyFileSync(join(dir, 'alice.key'), join(dir, 'client.key'));
    }
  });

  it('sends a read that finds its kept connection closed once more on a new one, and not a write', async () => {
    const client = await KubeClient.load(kubeconfig, { qps: -1, burst: 1 });
    try {
      await client.call('GET', '/api/v1/namespaces');
      const before = seen.connections;
      expect(await client.call('GET', '/stale/list')).toEqual({});
      expect(seen.connections).toBe(before + 1);
      await expect(client.call('PUT', '/stale/status', { a: 1 })).rejects.toThrow(/socket hang up/);
    } finally {
      client.close();
    }
  });
});
