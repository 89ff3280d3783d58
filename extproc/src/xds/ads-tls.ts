// Mutual TLS on the ADS port: the control plane's certificate and key, and the CA whose
// certificates the Envoys must present, from a source that is followed — files (read again
// when they change) or a Kubernetes Secret (watched). A client without a certificate from that
// CA (none, another CA's, an expired one) is refused during the TLS handshake, before any
// stream exists.
//
// A rotation changes the parts one after the other: what the source holds is put in use only
// when the certificate, its key and the CA make a valid whole, and the certificate has not
// expired; until then the last good set stays (and a connection already open keeps the
// certificate it was opened with, unless the new CA no longer takes its client's: ads-peer-trust.ts).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext } from 'node:tls';
import * as grpc from '@grpc/grpc-js';

/** The files `serve --xds-tls-cert/--xds-tls-key/--xds-client-ca` name. */
export interface AdsTlsFiles {
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string;
}

/** The three parts as PEM, unchecked. */
export interface AdsTlsPem {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

/**
 * Where the three parts come from, followed while the port is served. A Kubernetes Secret
 * source (provider/kubernetes/ads-tls-secret.ts) has this shape too.
 */
export interface AdsTlsSource {
  /** For the log: "TLS files", "TLS Secret NAMESPACE/NAME". */
  readonly description: string;
  /** What names each part, for errors: a flag and its file, a Secret and its key. */
  readonly parts: Record<keyof AdsTlsFiles, string>;
  /** What the source held when it was read at start. */
  readonly initial: AdsTlsPem;
  /** Calls `changed` with what the source holds after each change (or why it cannot be read); returns what stops it. */
  follow(changed: (next: AdsTlsPem | Error) => void): () => void;
  /** A source that watches Secrets: whether each is watched now (for /metrics). */
  watchStates?(): readonly { readonly secret: string; readonly flag: string; readonly watched: boolean }[];
}

interface Material extends AdsTlsPem {
  /** For the log: the certificate's subject, serial and end of validity. */
  readonly summary: string;
}

/** How often the files' metadata is checked (watchFile follows the symlink swaps Kubernetes makes). */
const POLL_MS = 500;

/** The flags that name the files, for errors. */
const SERVE_FLAGS = { cert: '--xds-tls-cert', key: '--xds-tls-key', clientCa: '--xds-client-ca' } as const;

/**
 * Reads and checks the three files: a certificate, its own key, and a CA; throws with the
 * file at fault (named by `flags`: envoy-config checks the Envoy's side with it too).
 */
export function readAdsTls(
  files: AdsTlsFiles,
  flags: Record<keyof AdsTlsFiles, string> = SERVE_FLAGS,
): Material {
  return checkAdsTls(readPem(files, flags), fileParts(files, flags));
}

/** The three parts checked: a certificate, its own key, and a CA; throws with the part at fault. */
export function checkAdsTls(pem: AdsTlsPem, parts: Record<keyof AdsTlsFiles, string>): Material {
  const { cert, key, ca } = pem;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new Error(`${parts.cert}: not a PEM certificate (${(e as Error).message})`);
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('it is not the key of the certificate');
  } catch (e) {
    throw new Error(`${parts.key}: ${(e as Error).message}`);
  }
  try {
    new X509Certificate(ca);
    createSecureContext({ cert, key, ca });
  } catch (e) {
    throw new Error(`${parts.clientCa}: not a PEM CA certificate (${(e as Error).message})`);
  }
  const summary = `${x509.subject.replace(/\n/g, ', ')}, serial ${x509.serialNumber}, valid until ${x509.validTo}`;
  return { cert, key, ca, summary };
}

function fileParts(
  files: AdsTlsFiles,
  flags: Record<keyof AdsTlsFiles, string>,
): Record<keyof AdsTlsFiles, string> {
  return {
    cert: `${flags.cert} ${files.cert}`,
    key: `${flags.key} ${files.key}`,
    clientCa: `${flags.clientCa} ${files.clientCa}`,
  };
}

function readPem(files: AdsTlsFiles, flags: Record<keyof AdsTlsFiles, string>): AdsTlsPem {
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`${what} ${file}: ${(e as Error).message}`);
    }
  };
  return {
    cert: read(files.cert, flags.cert),
    key: read(files.key, flags.key),
    ca: read(files.clientCa, flags.clientCa),
  };
}

/** The three files as a source: read now, and again whenever one of them changes. */
export function adsTlsFileSource(files: AdsTlsFiles): AdsTlsSource {
  const paths = [...new Set([files.cert, files.key, files.clientCa])];
  return {
    description: 'TLS files',
    parts: fileParts(files, SERVE_FLAGS),
    initial: readPem(files, SERVE_FLAGS),
    follow(changed) {
      const seen = (current: { mtimeMs: number }, previous: { mtimeMs: number }): void => {
        if (current.mtimeMs === previous.mtimeMs) return;
        let next: AdsTlsPem | Error;
        try {
          next = readPem(files, SERVE_FLAGS);
        } catch (e) {
          next = e as Error;
        }
        changed(next);
      };
      for (const file of paths) watchFile(file, { interval: POLL_MS, persistent: false }, seen);
      return () => {
        for (const file of paths) unwatchFile(file, seen);
      };
    },
  };
}

/** How far ahead of this clock a certificate may start and still be taken at start. */
export const START_SKEW_MS = 5 * 60_000;

/**
 * Throws when the certificate's validity has ended: put in use, it would make every Envoy refuse
 * the port, so a rotation to it keeps the set in use. A rotation takes one not valid yet (a clock
 * a little behind the issuer's would otherwise refuse a fresh certificate for good, as no later
 * change comes); at start (`atStart`) one that starts more than START_SKEW_MS ahead is refused
 * too, as a restart tries again.
 */
export function checkValidity(cert: Buffer, part: string, atStart = false): void {
  const { validFrom, validTo } = new X509Certificate(cert);
  const dates = `valid from ${validFrom} until ${validTo}, and this machine's clock says ${new Date().toUTCString()}`;
  if (Date.parse(validTo) <= Date.now()) throw new Error(`${part}: the certificate expired (${dates})`);
  // An issuer does not backdate a fresh certificate: a node's clock a little behind it is skew,
  // not a wrong certificate, and refusing would only make Kubernetes restart serve with back-off.
  if (atStart && Date.parse(validFrom) > Date.now() + START_SKEW_MS)
    throw new Error(`${part}: the certificate is not valid yet (${dates})`);
}

/**
 * grpc-js's certificate provider over a source: it hands out a set once it checked it, and
 * again whenever the source changes into another valid set.
 */
export class AdsTlsProvider implements grpc.experimental.CertificateProvider {
  private material: Material;
  private readonly caListeners = new Set<grpc.experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<grpc.experimental.IdentityCertificateUpdateListener>();
  private unfollow: (() => void) | undefined;
  private lastRefusal = '';

  constructor(
    private readonly source: AdsTlsSource,
    private readonly log: (line: string) => void,
    /** Told the client CA once a change put another in use (ads-peer-trust.ts ends the streams it no longer takes). */
    private readonly caChanged?: (ca: Buffer) => void,
  ) {
    this.material = checkAdsTls(source.initial, source.parts);
  }

  /** The client CA in use (PEM, maybe a bundle). */
  get ca(): Buffer {
    return this.material.ca;
  }

  /** The certificate in use, for the log. */
  get summary(): string {
    return this.material.summary;
  }

  /** The credentials of an ADS server that asks every client for a certificate from the CA. */
  credentials(): grpc.ServerCredentials {
    // The same provider gives both the identity and the CA (grpc-js reads them as two).
    return grpc.experimental.createCertificateProviderServerCredentials(this, this, true);
  }

  addCaCertificateListener(listener: grpc.experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    this.startFollowing();
    // Not synchronously: grpc-js registers its own watcher right after adding this listener.
    process.nextTick(() => listener({ caCertificate: this.material.ca }));
  }

  removeCaCertificateListener(listener: grpc.experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
    this.stopFollowingIfUnused();
  }

  addIdentityCertificateListener(listener: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    this.startFollowing();
    process.nextTick(() => listener({ certificate: this.material.cert, privateKey: this.material.key }));
  }

  removeIdentityCertificateListener(listener: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
    this.stopFollowingIfUnused();
  }

  /** Stops following the source (the server stopped). */
  close(): void {
    this.caListeners.clear();
    this.identityListeners.clear();
    this.stopFollowingIfUnused();
  }

  private startFollowing(): void {
    if (!this.unfollow) this.unfollow = this.source.follow(this.changed);
  }

  private stopFollowingIfUnused(): void {
    if (!this.unfollow || this.caListeners.size + this.identityListeners.size > 0) return;
    this.unfollow();
    this.unfollow = undefined;
  }

  private readonly changed = (pem: AdsTlsPem | Error): void => {
    let next: Material;
    try {
      if (pem instanceof Error) throw pem;
      next = checkAdsTls(pem, this.source.parts);
      checkValidity(next.cert, this.source.parts.cert);
    } catch (e) {
      // Often half a rotation (the certificate written, its key not yet): the next change completes it.
      const why = (e as Error).message;
      if (why !== this.lastRefusal)
        this.log(`xds: ${this.source.description} changed but not usable yet, keeping the last: ${why}`);
      this.lastRefusal = why;
      return;
    }
    this.lastRefusal = '';
    const same =
      next.cert.equals(this.material.cert) &&
      next.key.equals(this.material.key) &&
      next.ca.equals(this.material.ca);
    if (same) return;
    const caMoved = !next.ca.equals(this.material.ca);
    this.material = next;
    this.log(`xds: ${this.source.description} reloaded; new connections get ${next.summary}`);
    for (const l of this.caListeners) l({ caCertificate: next.ca });
    for (const l of this.identityListeners) l({ certificate: next.cert, privateKey: next.key });
    if (caMoved) this.caChanged?.(next.ca);
  };
}
