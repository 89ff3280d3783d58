// Development and test certificates, made with node:crypto alone (no openssl needed): a
// certificate authority and server certificates it signs, ECDSA P-256 with SHA-256, X.509 v3
// in DER written by hand. For `steadfast quickstart` and the tests — never for production.
import {
  type KeyObject,
  X509Certificate,
  createHash,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';

export interface DevKeyPair {
  /** PEM certificate. */
  readonly certificate: string;
  /** PEM PKCS#8 private key. */
  readonly privateKey: string;
}

export interface DevAuthority extends DevKeyPair {
  readonly name: string;
  readonly key: KeyObject;
  readonly spki: Buffer;
}

export interface IssueOptions {
  readonly commonName: string;
  /** subjectAltName DNS names (wildcards allowed). */
  readonly dnsNames?: readonly string[];
  /** subjectAltName URIs (a SPIFFE id, say). */
  readonly uris?: readonly string[];
  /** subjectAltName IP addresses (IPv4). */
  readonly ipAddresses?: readonly string[];
  /** Validity in days from `notBefore`; default 30. */
  readonly days?: number;
  /** Start of validity; default an hour ago (a test makes an expired certificate with an earlier one). */
  readonly notBefore?: Date;
  /** What the certificate is for (extended key usage); default a server. */
  readonly usage?: 'server' | 'client';
}

// DER: tag, length, content.
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tlv(0x31, Buffer.concat(parts));
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bits = (b: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, (v[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(d: Date): Buffer {
  const iso = d.toISOString();
  // UTCTime YYMMDDHHMMSSZ up to 2049, GeneralizedTime after.
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function name(commonName: string): Buffer {
  return seq(
    set(seq(oid('2.5.4.10'), tlv(0x0c, Buffer.from('steadfast development', 'utf8')))),
    set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const keyId = (spki: Buffer): Buffer => createHash('sha1').update(spki).digest();

function certificate(
  subject: string,
  issuer: { name: string; key: KeyObject; spki: Buffer },
  spki: Buffer,
  validity: { readonly days: number; readonly notBefore?: Date | undefined },
  extensions: Buffer[],
): string {
  const days = validity.days;
  const notBefore = validity.notBefore ?? new Date(Date.now() - 3600_000);
  const notAfter = new Date(notBefore.getTime() + days * 86400_000);
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    ECDSA_SHA256,
    name(issuer.name),
    seq(time(notBefore), time(notAfter)),
    name(subject),
    spki,
    tlv(
      0xa3,
      seq(
        ...extensions,
        extension('2.5.29.14', false, octets(keyId(spki))),
        extension('2.5.29.35', false, seq(tlv(0x80, keyId(issuer.spki)))),
      ),
    ),
  );
  const signature = sign('sha256', tbs, issuer.key);
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

function keyPair(): { key: KeyObject; spki: Buffer; privateKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    key: privateKey,
    spki: publicKey.export({ type: 'spki', format: 'der' }),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/** A self-signed certificate authority (basicConstraints CA, keyCertSign). */
export function createDevAuthority(commonName: string, days = 30): DevAuthority {
  const k = keyPair();
  const self = { name: commonName, key: k.key, spki: k.spki };
  const cert = certificate(commonName, self, k.spki, { days }, [
    extension('2.5.29.19', true, seq(bool(true))),
    // digitalSignature, keyCertSign, cRLSign
    extension('2.5.29.15', true, bits(Buffer.from([0x86]), 1)),
  ]);
  return { name: commonName, key: k.key, spki: k.spki, certificate: cert, privateKey: k.privateKey };
}

/** A server (or client) certificate signed by `authority`, for the given DNS names and IP addresses. */
export function issueDevCertificate(authority: DevAuthority, options: IssueOptions): DevKeyPair {
  const k = keyPair();
  const names = [
    ...(options.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
    ...(options.uris ?? []).map((u) => tlv(0x86, Buffer.from(u, 'ascii'))),
    ...(options.ipAddresses ?? []).map((ip) => tlv(0x87, Buffer.from(ip.split('.').map(Number)))),
  ];
  const validity = { days: options.days ?? 30, notBefore: options.notBefore };
  const cert = certificate(options.commonName, authority, k.spki, validity, [
    extension('2.5.29.19', true, seq()),
    // digitalSignature
    extension('2.5.29.15', true, bits(Buffer.from([0x80]), 7)),
    // serverAuth, or clientAuth
    extension(
      '2.5.29.37',
      false,
      seq(oid(options.usage === 'client' ? '1.3.6.1.5.5.7.3.2' : '1.3.6.1.5.5.7.3.1')),
    ),
    ...(names.length > 0 ? [extension('2.5.29.17', false, seq(...names))] : []),
  ]);
  // Parsing it back catches an encoding mistake here rather than in a TLS handshake.
  new X509Certificate(cert);
  return { certificate: cert, privateKey: k.privateKey };
}

/** A Secret of type kubernetes.io/tls holding `pair`, as Gateway API YAML. */
export function tlsSecretYaml(name: string, namespace: string, pair: DevKeyPair, comment: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return `# ${comment}
apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: ${namespace}
type: kubernetes.io/tls
data:
  tls.crt: ${b64(pair.certificate)}
  tls.key: ${b64(pair.privateKey)}
`;
}
