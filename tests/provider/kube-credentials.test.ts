// The credentials read without @kubernetes/client-node give a request the same options it
// gives (its agent aside: the client's own pool sets that), for every plain kind of kubeconfig
// and for the pod's service account; the rest still goes through it, errors included.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { kubeCredentials } from '../../extproc/src/provider/kubernetes/kube-credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-kube-credentials-'));
// Not real certificates: only bytes to carry (nothing here connects).
writeFileSync(join(dir, 'ca.crt'), 'the CA\n');
writeFileSync(join(dir, 'client.crt'), 'a client certificate\n');
writeFileSync(join(dir, 'client.key'), 'its key\n');
writeFileSync(join(dir, 'token'), 'a-token-from-a-file');
const b64 = (s: string) => Buffer.from(s).toString('base64');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A kubeconfig of one cluster, user and context, written to a file of its own. */
function kubeconfig(name: string, cluster: string, user: string): string {
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: c, cluster: { ${cluster} } }]`,
      `users: [{ name: u, user: { ${user} } }]`,
      'contexts: [{ name: x, context: { cluster: c, user: u, namespace: ns } }]',
      'current-context: x',
      '',
    ].join('\n'),
  );
  return file;
}

/** What a request's options hold once the credentials are applied: buffers as text, no agent. */
function seen(o: RequestOptions): Record<string, unknown> {
  const { agent: _agent, ...rest } = o;
  return Object.fromEntries(
    Object.entries(rest).map(([k, v]) => [k, Buffer.isBuffer(v) ? `buffer:${v.toString()}` : v]),
  );
}

async function ours(file: string | undefined, prefix = ''): Promise<Record<string, unknown>> {
  const options: RequestOptions = { method: 'GET', headers: { accept: 'application/json' } };
  await (await kubeCredentials(file, prefix)).apply(options);
  return seen(options);
}

async function theirs(load: (kc: KubeConfig) => void): Promise<Record<string, unknown>> {
  const kc = new KubeConfig();
  load(kc);
  const options: RequestOptions = { method: 'GET', headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  return seen(options);
}

const PLAIN: Record<string, [cluster: string, user: string]> = {
  'a token and a CA file (relative)': [
    'server: "https://127.0.0.1:6443/", certificate-authority: ca.crt',
    'token: abc',
  ],
  'a client certificate and key in files, a CA in the file': [
    `server: "https://k.example:443", certificate-authority-data: ${b64('inline CA')}`,
    'client-certificate: client.crt, client-key: client.key',
  ],
  'a client certificate and key inline, a TLS server name, impersonation': [
    'server: "https://10.0.0.1", tls-server-name: api.internal',
    `client-certificate-data: ${b64('inline cert')}, client-key-data: ${b64('inline key')}, as: someone`,
  ],
  'skip-verify and a token file': [
    'server: "https://10.0.0.1", insecure-skip-tls-verify: true',
    `token-file: ${join(dir, 'token')}`,
  ],
};

describe('plain kubeconfig credentials', () => {
  for (const [name, [cluster, user]] of Object.entries(PLAIN)) {
    it(`gives what @kubernetes/client-node gives: ${name}`, async () => {
      const file = kubeconfig(name.replace(/\W+/g, '-'), cluster, user);
      const expected = await theirs((kc) => kc.loadFromFile(file));
      expect(await ours(file)).toEqual(expected);
      const kc = new KubeConfig();
      kc.loadFromFile(file);
      const credentials = await kubeCredentials(file);
      expect([credentials.plain, credentials.server, credentials.proxied]).toEqual([
        true,
        kc.getCurrentCluster()?.server,
        false,
      ]);
    });
  }
});

describe('credentials @kubernetes/client-node still reads', () => {
  it('an exec plugin: the same options (its token from the plugin)', async () => {
    const exec = `exec: { apiVersion: client.authentication.k8s.io/v1, command: ${process.execPath}, args: ["-e", "console.log(JSON.stringify({apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: {token: 'from-exec'}}))"], interactiveMode: Never }`;
    const file = kubeconfig('exec', 'server: "https://10.0.0.1"', exec);
    expect((await kubeCredentials(file)).plain).toBe(false);
    expect(await ours(file)).toMatchObject({ headers: { Authorization: 'Bearer from-exec' } });
  });

  it('a proxy: requests take its agent', async () => {
    const file = kubeconfig(
      'proxy',
      'server: "https://10.0.0.1", proxy-url: "http://127.0.0.1:3128"',
      'token: t',
    );
    expect((await kubeCredentials(file)).proxied).toBe(true);
  });

  it('a malformed kubeconfig: its error, as before', async () => {
    const file = join(dir, 'broken.kubeconfig');
    writeFileSync(file, 'clusters: [{ name: c, cluster: {} }]\n');
    await expect(kubeCredentials(file)).rejects.toThrow(
      `cannot read the kubeconfig ${file}: clusters[0].cluster.server is missing`,
    );
  });
});

describe("the pod's service account", () => {
  const env = { ...process.env };
  afterEach(() => {
    process.env = { ...env };
  });

  for (const host of ['10.96.0.1', 'fd00::1']) {
    it(`gives what @kubernetes/client-node gives (${host})`, async () => {
      const prefix = join(dir, `pod-${host.replace(/\W/g, '')}`);
      const sa = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
      mkdirSync(sa, { recursive: true });
      writeFileSync(join(sa, 'ca.crt'), 'the cluster CA\n');
      writeFileSync(join(sa, 'token'), 'projected-token');
      process.env.KUBERNETES_SERVICE_HOST = host;
      process.env.KUBERNETES_SERVICE_PORT = '443';
      const expected = await theirs((kc) => kc.loadFromCluster(prefix));
      expect(await ours(undefined, prefix)).toEqual(expected);
      const kc = new KubeConfig();
      kc.loadFromCluster(prefix);
      const credentials = await kubeCredentials(undefined, prefix);
      expect([credentials.plain, credentials.server]).toEqual([true, kc.getCurrentCluster()?.server]);
    });
  }

  it('reads a rotated token again once the one it holds is a minute old', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const prefix = join(dir, 'pod-rotated');
      const sa = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
      mkdirSync(sa, { recursive: true });
      writeFileSync(join(sa, 'ca.crt'), 'the cluster CA\n');
      writeFileSync(join(sa, 'token'), 'first');
      process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
      process.env.KUBERNETES_SERVICE_PORT = '443';
      const credentials = await kubeCredentials(undefined, prefix);
      const bearer = async () => {
        const o: RequestOptions = { headers: {} };
        await credentials.apply(o);
        return (o.headers as Record<string, string>).Authorization;
      };
      expect(await bearer()).toBe('Bearer first');
      writeFileSync(join(sa, 'token'), 'second');
      vi.advanceTimersByTime(60_000);
      expect(await bearer()).toBe('Bearer first');
      vi.advanceTimersByTime(1_001);
      expect(await bearer()).toBe('Bearer second');
    } finally {
      vi.useRealTimers();
    }
  });
});
