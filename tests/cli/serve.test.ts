// `steadfast serve` refuses what it cannot run, before it opens a port.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../extproc/src/cli/main.js';
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';
import { generateSessionKey } from '../../extproc/src/provider/key-files.js';

const tmp = mkdtempSync(join(tmpdir(), 'steadfast-serve-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function serve(...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(['serve', ...args], { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('steadfast serve', () => {
  it('needs --config or --policy-token, not both', async () => {
    expect(await serve()).toMatchObject({ code: 2, err: expect.stringContaining('give --config PATH') });
    const both = await serve('--config', tmp, '--policy-token', 'sf1;id=x;k=h');
    expect(both).toMatchObject({ code: 2, err: expect.stringContaining('exclude each other') });
  });

  it('writes Envoy files (--envoy-files) only from a configuration', async () => {
    const r = await serve('--policy-token', 'sf1;id=x;k=h', '--envoy-files', join(tmp, 'envoy'));
    expect(r).toMatchObject({ code: 2, err: expect.stringContaining('--envoy-files needs --config') });
  });

  it('checks the address, the port and the worker count', async () => {
    expect((await serve('--config', tmp, '--grpc-address', 'nope')).err).toContain('is not HOST:PORT');
    expect((await serve('--config', tmp, '--admin-port', '70000')).err).toContain('--admin-port');
    expect((await serve('--config', tmp, '--workers', '0')).err).toContain('--workers');
  });

  it('refuses a bad session key file, naming file and line, and never prints a key', async () => {
    const good = generateSessionKey();
    const file = join(tmp, 'keys');
    writeFileSync(file, `${good}\nshort\n`);
    const r = await serve('--config', tmp, '--session-key-file', file);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:2`);
    expect(r.err + r.out).not.toContain(good);
    // The old spelling still works, and says what to use instead.
    const missing = await serve('--config', tmp, '--session-keys', join(tmp, 'absent'));
    expect(missing.err).toContain(
      'steadfast serve: warning: --session-keys is deprecated; use --session-key-file',
    );
    expect(missing).toMatchObject({
      code: 2,
      err: expect.stringContaining('cannot read the session key file'),
    });
  });
});

describe('steadfast serve: configuration paths', () => {
  it('refuses a missing or empty --config with one clear line (exit 2)', async () => {
    const missing = await serve('--config', join(tmp, 'nowhere'));
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--config ${join(tmp, 'nowhere')}: ENOENT`);
    expect(missing.err).toContain('--allow-empty to start and wait for files');
    const empty = mkdtempSync(join(tmp, 'empty-'));
    writeFileSync(join(empty, 'notes.txt'), 'not configuration\n');
    const r = await serve('--config', empty);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no *.yaml, *.yml or *.json file there, so there is nothing to serve');
    expect(r.out).toBe('');
  });
});

describe('steadfast serve: ports', () => {
  it('stops with exit 3 and one line naming a port that is taken, before it starts anything', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const grpc = await serve(
        '--config',
        'examples/quickstart',
        '--ext-proc-address',
        `127.0.0.1:${port}`,
        '--admin-port',
        '0',
      );
      expect(grpc.code).toBe(3);
      expect(grpc.err.trim().split('\n')).toEqual([
        `steadfast serve: cannot listen: 127.0.0.1:${port} is in use by another process (the ext_proc server): ` +
          'stop the process that holds it (another serve?), or use --ext-proc-address HOST:PORT',
      ]);
      const admin = await serve(
        '--config',
        'examples/quickstart',
        '--ext-proc-address',
        '127.0.0.1:0',
        '--admin-port',
        String(port),
      );
      expect(admin.code).toBe(3);
      expect(admin.err).toContain(`127.0.0.1:${port} is in use by another process (the admin API)`);
      expect(admin.out).toBe('');
    } finally {
      holder.close();
    }
  });
});

describe('steadfast serve --xds-tls-secret', () => {
  it('takes the ADS TLS from a Secret only with a cluster, and from one place only', async () => {
    const xds = ['--config', tmp, '--session-key', generateSessionKey(), '--xds', '127.0.0.1:0'];
    const noCluster = await serve(...xds, '--xds-tls-secret', 'steadfast-system/xds');
    expect(noCluster).toMatchObject({
      code: 2,
      err: expect.stringContaining('--xds-tls-secret needs --kubeconfig FILE or --in-cluster'),
    });
    const files = ['--xds-tls-cert', 'a.crt', '--xds-tls-key', 'a.key', '--xds-client-ca', 'ca.crt'];
    const both = await serve(...xds, ...files, '--xds-tls-secret', 'steadfast-system/xds');
    expect(both.err).toContain('--xds-tls-secret and --xds-tls-cert exclude each other');
    const caAlone = await serve(...xds, '--xds-client-ca-secret', 'steadfast-system/ca');
    expect(caAlone.err).toContain('--xds-client-ca-secret goes with --xds-tls-secret');
    expect(noCluster.out + both.out + caAlone.out).toBe('');
  });
});

describe('steadfast serve --xds-tls-cert', () => {
  it('stops at start on a certificate expired or not valid yet, naming the flag and the dates', async () => {
    const ca = createDevAuthority('xds CA');
    const day = 86400_000;
    const tlsArgs = (name: string, notBefore: Date, days: number): string[] => {
      const pair = issueDevCertificate(ca, {
        commonName: 'xds',
        ipAddresses: ['127.0.0.1'],
        notBefore,
        days,
      });
      const file = (part: string) => join(tmp, `${name}.${part}`);
      writeFileSync(file('crt'), pair.certificate);
      writeFileSync(file('key'), pair.privateKey);
      writeFileSync(file('ca'), ca.certificate);
      return ['--xds-tls-cert', file('crt'), '--xds-tls-key', file('key'), '--xds-client-ca', file('ca')];
    };
    const xds = ['--config', tmp, '--session-key', generateSessionKey(), '--xds', '127.0.0.1:0'];
    const expired = await serve(...xds, ...tlsArgs('expired', new Date(Date.now() - 3 * day), 1));
    expect(expired).toMatchObject({ code: 2, out: '' });
    expect(expired.err).toMatch(
      new RegExp(
        `--xds-tls-cert ${join(tmp, 'expired.crt')}: the certificate expired \\(valid from .+ until .+ GMT, and this machine's clock says .+\\)`,
      ),
    );
    const early = await serve(...xds, ...tlsArgs('early', new Date(Date.now() + day), 30));
    expect(early).toMatchObject({ code: 2, out: '' });
    expect(early.err).toMatch(/--xds-tls-cert \S+early\.crt: the certificate is not valid yet \(valid from /);
  });
});

describe('steadfast serve --policy-token', () => {
  it('refuses a token it cannot read, saying what is wrong, before it opens a port', async () => {
    const garbage = await serve('--policy-token', 'garbage');
    expect(garbage.code).toBe(2);
    expect(garbage.err).toContain('--policy-token: must start with "sf1;", not "garbage"');
    const badNumber = await serve('--policy-token', 'sf1;id=x;k=h;ra=two');
    expect(badNumber.err).toContain('--policy-token: ra=two: not an integer');
    const noId = await serve('--policy-token', 'sf1;k=h');
    expect(noId.err).toContain('id= (the rule) is missing');
    expect(garbage.out + badNumber.out + noId.out).toBe('');
  });
});
