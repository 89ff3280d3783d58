// The key material of HTTPS listeners, beside the PolicyTable rather than in it: the table
// is served by the admin API (/v1/policy) and printed by tools; private keys never are.

export interface CertificateMaterial {
  /** PEM: the certificate, then any intermediates. */
  readonly certificateChain: string;
  /** PEM private key. */
  readonly privateKey: string;
}

/** Key pairs by certificate id (`secret/<ns>/<name>`), the names the listeners' SDS configs use. */
export interface TlsMaterial {
  readonly certificates: Readonly<Record<string, CertificateMaterial>>;
}

export const NO_TLS_MATERIAL: TlsMaterial = { certificates: {} };
