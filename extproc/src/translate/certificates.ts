// PEM checks for certificates, keys and CA bundles, with node:crypto. Messages name what is
// wrong, never the material itself.
import { X509Certificate, createPrivateKey } from 'node:crypto';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Every certificate in a PEM bundle, or why the bundle cannot be used. */
export function parseCertificates(pem: string): X509Certificate[] | string {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  const out: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      return `certificate ${i + 1} of ${blocks.length} is not a valid X.509 certificate`;
    }
  }
  return out;
}

export interface KeyPairProblem {
  /** The data key at fault: `tls.crt` or `tls.key`. */
  readonly key: 'tls.crt' | 'tls.key';
  readonly message: string;
}

/** Checks that `certificateChain` parses and that `privateKey` is the key of its first certificate. */
export function checkKeyPair(certificateChain: string, privateKey: string): KeyPairProblem | undefined {
  const certs = parseCertificates(certificateChain);
  if (typeof certs === 'string') return { key: 'tls.crt', message: certs };
  let key;
  try {
    key = createPrivateKey(privateKey);
  } catch {
    return { key: 'tls.key', message: 'is not a PEM private key (PKCS#8, PKCS#1 or SEC1, unencrypted)' };
  }
  if (!(certs[0] as X509Certificate).checkPrivateKey(key))
    return { key: 'tls.key', message: 'does not match the (first) certificate in tls.crt' };
  return undefined;
}
