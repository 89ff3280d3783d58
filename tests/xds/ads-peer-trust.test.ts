// Which certificates an open ADS stream's trust rests on: the chain the Envoy presented, up to
// a CA of the client CA in use, and on up that bundle to a self-signed root — as OpenSSL builds
// it in a handshake (no partial chains), so an expired root ends the stream as it would refuse
// a reconnect, and a bundle without the root trusts nothing.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { untrustedBecause } from '../../extproc/src/xds/ads-peer-trust.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-peer-trust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A root valid one day, an intermediate it signed and a client leaf the intermediate signed, 30 days each. */
function makeChain(): { root: X509Certificate; intermediate: X509Certificate; leaf: X509Certificate } {
  openssl(
    'req',
    '-x509',
    ...key,
    '-days',
    '1',
    '-subj',
    '/CN=test root',
    '-keyout',
    'root.key',
    '-out',
    'root.crt',
  );
  writeFileSync(join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n');
  writeFileSync(join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  openssl('req', '-new', ...key, '-subj', '/CN=test intermediate', '-keyout', 'int.key', '-out', 'int.csr');
  openssl(
    ...['x509', '-req', '-in', 'int.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-CAcreateserial'],
    ...['-days', '30', '-extfile', 'ca.ext', '-out', 'int.crt'],
  );
  openssl('req', '-new', ...key, '-subj', '/CN=envoy', '-keyout', 'leaf.key', '-out', 'leaf.csr');
  openssl(
    ...['x509', '-req', '-in', 'leaf.csr', '-CA', 'int.crt', '-CAkey', 'int.key', '-CAcreateserial'],
    ...['-days', '30', '-extfile', 'leaf.ext', '-out', 'leaf.crt'],
  );
  const read = (f: string) => new X509Certificate(readFileSync(join(dir, f)));
  return { root: read('root.crt'), intermediate: read('int.crt'), leaf: read('leaf.crt') };
}

describe('the trust an open ADS stream rests on', () => {
  const { root, intermediate, leaf } = makeChain();
  afterEach(() => vi.useRealTimers());

  it('trusts a leaf presented alone or with its intermediate, under a bundle of intermediate and root', () => {
    expect(untrustedBecause([leaf], [intermediate, root])).toBeUndefined();
    expect(untrustedBecause([leaf, intermediate], [root])).toBeUndefined();
  });

  it('ends it when the root expires, though the leaf and the intermediate it names are still valid', () => {
    vi.useFakeTimers({ now: Date.parse(root.validTo) + 60_000 });
    expect(untrustedBecause([leaf], [intermediate, root])).toMatch(
      /^the certificate of its issuer CN=test root expired \(valid until /,
    );
    expect(untrustedBecause([leaf, intermediate], [root])).toMatch(/CN=test root expired/);
  });

  it('does not trust a bundle that stops at the intermediate: a handshake needs the root', () => {
    expect(untrustedBecause([leaf], [intermediate])).toMatch(/is not from the client CA now in use/);
  });
});
