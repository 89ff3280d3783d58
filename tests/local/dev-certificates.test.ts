// Development certificates made with node:crypto: openssl accepts the chain, the names and
// the key usage a server certificate needs, and a certificate from another CA does not verify.
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'sf-devcert-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function verify(ca: string, cert: string): string {
  writeFileSync(join(dir, 'ca.pem'), ca);
  writeFileSync(join(dir, 'cert.pem'), cert);
  try {
    return execFileSync(
      'openssl',
      [
        'verify',
        '-x509_strict',
        '-purpose',
        'sslserver',
        '-CAfile',
        join(dir, 'ca.pem'),
        join(dir, 'cert.pem'),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (e) {
    return `failed: ${String((e as { stdout?: string }).stdout)} ${String((e as { stderr?: string }).stderr)}`;
  }
}

describe('development certificates', () => {
  const ca = createDevAuthority('steadfast test CA');
  const leaf = issueDevCertificate(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost', '*.example.test'],
    ipAddresses: ['127.0.0.1'],
  });

  it('openssl verifies a server certificate against its CA (strict X.509, sslserver purpose)', () => {
    expect(verify(ca.certificate, leaf.certificate)).toContain('OK');
  });

  it('a certificate from another CA does not verify', () => {
    const other = createDevAuthority('another CA');
    const stranger = issueDevCertificate(other, { commonName: 'localhost', dnsNames: ['localhost'] });
    expect(verify(ca.certificate, stranger.certificate)).toMatch(/^failed/);
  });

  it('carries the names, a CA flag only on the CA, and a key that matches', () => {
    const c = new X509Certificate(leaf.certificate);
    expect(c.subjectAltName).toBe('DNS:localhost, DNS:*.example.test, IP Address:127.0.0.1');
    expect(c.ca).toBe(false);
    expect(new X509Certificate(ca.certificate).ca).toBe(true);
    expect(c.checkIssued(new X509Certificate(ca.certificate))).toBe(true);
    expect(c.checkPrivateKey(createPrivateKey(leaf.privateKey))).toBe(true);
    expect(new Date(c.validTo).getTime()).toBeGreaterThan(Date.now() + 29 * 86400_000);
  });
});
