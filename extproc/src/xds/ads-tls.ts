// Mutual TLS on the ADS port: the control plane's certificate and key, and the CA whose
// certificates the Envoys must present, read from files and read again when they change. A
// client without a certificate from that CA (none, another CA's, an expired one) is refused
// during the TLS handshake, before any stream exists.
//
// A rotation writes the files one after the other: what is read is put in use only when the
// certificate, its key and the CA make a valid whole; until then the last good set stays (and
// a connection already open keeps the certificate it was opened with).
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

interface Material {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
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
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`${what} ${file}: ${(e as Error).message}`);
    }
  };
  const cert = read(files.cert, flags.cert);
  const key = read(files.key, flags.key);
  const ca = read(files.clientCa, flags.clientCa);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new Error(`${flags.cert} ${files.cert}: not a PEM certificate (${(e as Error).message})`);
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('it is not the key of the certificate');
  } catch (e) {
    throw new Error(`${flags.key} ${files.key}: ${(e as Error).message}`);
  }
  try {
    new X509Certificate(ca);
    createSecureContext({ cert, key, ca });
  } catch (e) {
    throw new Error(
      `${flags.clientCa} ${files.clientCa}: not a PEM CA certificate (${(e as Error).message})`,
    );
  }
  const summary = `${x509.subject.replace(/\n/g, ', ')}, serial ${x509.serialNumber}, valid until ${x509.validTo}`;
  return { cert, key, ca, summary };
}

/**
 * grpc-js's certificate provider over the three files: it hands out a set once it checked
 * it, and again whenever the files change into another valid set.
 */
export class AdsTlsFilesProvider implements grpc.experimental.CertificateProvider {
  private material: Material;
  private readonly caListeners = new Set<grpc.experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<grpc.experimental.IdentityCertificateUpdateListener>();
  private watching = false;
  private lastRefusal = '';

  constructor(
    private readonly files: AdsTlsFiles,
    private readonly log: (line: string) => void,
  ) {
    this.material = readAdsTls(files);
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
    this.startWatching();
    // Not synchronously: grpc-js registers its own watcher right after adding this listener.
    process.nextTick(() => listener({ caCertificate: this.material.ca }));
  }

  removeCaCertificateListener(listener: grpc.experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
    this.stopWatchingIfUnused();
  }

  addIdentityCertificateListener(listener: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    this.startWatching();
    process.nextTick(() => listener({ certificate: this.material.cert, privateKey: this.material.key }));
  }

  removeIdentityCertificateListener(listener: grpc.experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
    this.stopWatchingIfUnused();
  }

  /** Stops watching the files (the server stopped). */
  close(): void {
    this.caListeners.clear();
    this.identityListeners.clear();
    this.stopWatchingIfUnused();
  }

  private startWatching(): void {
    if (this.watching) return;
    this.watching = true;
    for (const file of this.paths()) watchFile(file, { interval: POLL_MS, persistent: false }, this.changed);
  }

  private stopWatchingIfUnused(): void {
    if (!this.watching || this.caListeners.size + this.identityListeners.size > 0) return;
    this.watching = false;
    for (const file of this.paths()) unwatchFile(file, this.changed);
  }

  private paths(): string[] {
    return [...new Set([this.files.cert, this.files.key, this.files.clientCa])];
  }

  private readonly changed = (current: { mtimeMs: number }, previous: { mtimeMs: number }): void => {
    if (current.mtimeMs === previous.mtimeMs) return;
    let next: Material;
    try {
      next = readAdsTls(this.files);
    } catch (e) {
      // Often half a rotation (the certificate written, its key not yet): the next change completes it.
      const why = (e as Error).message;
      if (why !== this.lastRefusal)
        this.log(`xds: TLS files changed but not usable yet, keeping the last: ${why}`);
      this.lastRefusal = why;
      return;
    }
    this.lastRefusal = '';
    const same =
      next.cert.equals(this.material.cert) &&
      next.key.equals(this.material.key) &&
      next.ca.equals(this.material.ca);
    if (same) return;
    this.material = next;
    this.log(`xds: TLS files reloaded; new connections get ${next.summary}`);
    for (const l of this.caListeners) l({ caCertificate: next.ca });
    for (const l of this.identityListeners) l({ certificate: next.cert, privateKey: next.key });
  };
}
