// The certificates the conformance run makes at start (never committed): each a Secret of
// type kubernetes.io/tls signed by one CA the run trusts. Tables that need another Secret add
// it here; the manifests refer to them by name.
import {
  type DevAuthority,
  createDevAuthority,
  issueDevCertificate,
  tlsSecretYaml,
} from '../../../extproc/src/local/dev-certificates.js';

export interface ConformanceCertificate {
  readonly name: string;
  /** Default `default`. */
  readonly namespace?: string;
  /** Its subjectAltName DNS names; the first is also its common name. */
  readonly dnsNames: readonly string[];
}

export const CONFORMANCE_CERTIFICATES: readonly ConformanceCertificate[] = [
  // same-namespace-with-https-listener (manifests/gateways.yaml)
  { name: 'example-org-cert', dnsNames: ['example.org', 'https-listener.org'] },
  // HTTPSListenerDetectMisdirectedRequests: every name its requests send as SNI.
  {
    name: 'misdirected-requests-cert',
    dnsNames: ['example.org', 'second-example.org', '*.wildcard.org', 'unknown-example.org'],
  },
  // The frontend client-certificate tests' listeners (client-certificate-tables.ts).
  {
    name: 'tls-validity-checks-certificate',
    dnsNames: ['example.org', 'first-example.org', 'second-example.org', 'fourth-example.org'],
  },
  // GatewayModifyListeners' HTTPS listeners.
  {
    name: 'tls-validity-checks-certificate',
    namespace: 'gateway-modify-listeners',
    dnsNames: ['secure.test.com'],
  },
  // The Gateway*ReferenceGrant tests: a Secret in another namespace than their Gateways'.
  { name: 'certificate', namespace: 'gateway-conformance-web-backend', dnsNames: ['example.org'] },
];

export interface ConformanceTls {
  /** The CA every certificate is signed by, PEM. */
  readonly ca: string;
  /** The Secrets, as YAML documents. */
  readonly secrets: readonly string[];
}

/** A fresh CA and every certificate above, signed by it. */
export function makeConformanceTls(): ConformanceTls {
  const ca: DevAuthority = createDevAuthority('steadfast conformance test CA');
  const secrets = CONFORMANCE_CERTIFICATES.map((c) =>
    tlsSecretYaml(
      c.name,
      c.namespace ?? 'default',
      issueDevCertificate(ca, { commonName: c.dnsNames[0] as string, dnsNames: c.dnsNames }),
      'made by the conformance run',
    ),
  );
  return { ca: ca.certificate, secrets };
}
