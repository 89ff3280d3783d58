// `steadfast envoy-config` says only what is really wrong: nothing for a clean configuration,
// a warning (not a problem) for an ignored kind, each failing rule by name.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../extproc/src/cli/main.js';
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-envoy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = Buffer.alloc(32, 7).toString('base64');

async function envoyConfig(...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(['envoy-config', ...args], {
    out: (t) => (out += t),
    err: (t) => (err += `${t}\n`),
  });
  return { code, out, err };
}

describe('steadfast envoy-config', () => {
  it('prints nothing on stderr for the quickstart, in both modes', async () => {
    const gw = await envoyConfig('--config', 'examples/quickstart', '--session-key', KEY);
    expect(gw).toMatchObject({ code: 0, err: '' });
    const attach = await envoyConfig(
      '--config',
      'examples/quickstart',
      '--mode',
      'attach',
      '--session-key',
      KEY,
    );
    expect(attach).toMatchObject({ code: 0, err: '' });
  });

  it('does not ask for a session key when no rule uses session persistence', async () => {
    writeFileSync(
      join(dir, 'plain.yaml'),
      `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 10000 }]
---
apiVersion: v1
kind: Pod
metadata: { name: unrelated }
`,
    );
    const r = await envoyConfig('--config', dir);
    expect(r.code).toBe(0);
    expect(r.err.trim().split('\n')).toEqual([
      'steadfast envoy-config: warning: plain.yaml:8: kind Pod (v1) is not read by steadfast; ignored',
    ]);
  });

  it('names each rule that fails closed', async () => {
    writeFileSync(
      join(dir, 'route.yaml'),
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: missing, port: 80 }]
`,
    );
    const r = await envoyConfig('--config', dir);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      'steadfast envoy-config: 1 rule(s) fail closed and answer 500: httproute/default/shop/rule/0',
    );
    expect(r.err).not.toContain('problem(s) in the configuration');
  });
});

describe('steadfast envoy-config --xds --xds-tls-*', () => {
  const tls = join(dir, 'tls');
  mkdirSync(tls);
  const ca = createDevAuthority('envoy CA');
  const day = 86400_000;
  /** An Envoy's client certificate, its key (or another's) and the control plane's CA, as files. */
  const tlsArgs = (name: string, notBefore: Date, days: number, otherKey = false): string[] => {
    const issue = () => issueDevCertificate(ca, { commonName: 'envoy', usage: 'client', notBefore, days });
    const pair = issue();
    const file = (part: string) => join(tls, `${name}.${part}`);
    writeFileSync(file('crt'), pair.certificate);
    writeFileSync(file('key'), otherKey ? issue().privateKey : pair.privateKey);
    writeFileSync(file('ca'), ca.certificate);
    return ['--xds-tls-cert', file('crt'), '--xds-tls-key', file('key'), '--xds-tls-ca', file('ca')];
  };
  const xds = ['--xds', '127.0.0.1:18000'];

  it('writes the bootstrap for a certificate in its dates, with the files as absolute paths', async () => {
    const ok = await envoyConfig(...xds, ...tlsArgs('fresh', new Date(Date.now() - day), 30));
    expect(ok).toMatchObject({ code: 0, err: '' });
    expect(ok.out).toContain(join(tls, 'fresh.crt'));
  });

  it('refuses an expired certificate, one not valid yet and a key that is not its own, naming the file', async () => {
    const expired = await envoyConfig(...xds, ...tlsArgs('old', new Date(Date.now() - 3 * day), 1));
    expect(expired).toMatchObject({ code: 2, out: '' });
    expect(expired.err).toMatch(
      new RegExp(
        `--xds-tls-cert ${join(tls, 'old.crt')}: the certificate expired \\(valid from .+ until .+ GMT`,
      ),
    );
    const early = await envoyConfig(...xds, ...tlsArgs('early', new Date(Date.now() + day), 30));
    expect(early).toMatchObject({ code: 2, out: '' });
    expect(early.err).toMatch(/--xds-tls-cert \S+early\.crt: the certificate is not valid yet \(valid from /);
    // A few minutes ahead of this clock is skew, taken as serve takes it.
    const skewed = await envoyConfig(...xds, ...tlsArgs('skewed', new Date(Date.now() + 60_000), 30));
    expect(skewed).toMatchObject({ code: 0, err: '' });
    const mismatch = await envoyConfig(...xds, ...tlsArgs('mismatch', new Date(Date.now() - day), 30, true));
    expect(mismatch).toMatchObject({ code: 2, out: '' });
    expect(mismatch.err).toContain(
      `--xds-tls-key ${join(tls, 'mismatch.key')}: it is not the key of the certificate`,
    );
  });
});
