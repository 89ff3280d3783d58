// The TLS side of the conformance run, made at start and never committed, as upstream's suite
// makes it: the CA of the TLS backends (ConfigMap tls-checks-ca-certificate) and one nobody
// uses (mismatch-ca-certificate); the TLS echo backend (abc.example.com, other.example.com and
// a SPIFFE URI), one that also asks the gateway for a client certificate, and a gRPC backend
// with the same certificate; the client CAs of
// the frontend validation tests (ConfigMaps) with a client certificate from each; and the
// client certificate the gateway presents to backends (Secret tls-checks-client-certificate).
import { startEchoBackend } from '../../../backends/echo/start-echo-backend.js';
import { startGrpcBackend } from '../../../backends/grpc/start-grpc-backend.js';
import type { RunningBackend } from '../../../backends/running-backend.js';
import {
  type DevKeyPair,
  createDevAuthority,
  issueDevCertificate,
  tlsSecretYaml,
} from '../../../extproc/src/local/dev-certificates.js';

/** The client certificates a request may present (CaseRequest.clientCertificate), by name. */
export type ClientCertificateName =
  'tls-validity-checks-client-certificate' | 'tls-validity-checks-per-port-client-certificate';

/** The Services (ours, in the manifests) whose endpoints are a TLS backend, with their port names. */
const TLS_SERVICES: Readonly<
  Record<string, { readonly backend: number; readonly ports: readonly string[] }>
> = {
  'backendtlspolicy-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-host-mismatch-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-cert-mismatch-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-san-dns-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-san-dns-mismatch-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-san-uri-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-san-uri-mismatch-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-multiple-sans-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-multiple-mismatch-sans-test': { backend: 0, ports: ['btls'] },
  'backendtlspolicy-conflicted-without-section-name-test': { backend: 0, ports: ['https'] },
  'backendtlspolicy-conflicted-with-section-name-test': { backend: 0, ports: ['https-1', 'https-2'] },
  'backendtlspolicy-not-conflicted-test': { backend: 0, ports: ['https-1', 'https-2'] },
  'backendtlspolicy-nonexistent-ca-certificate-ref-test': { backend: 0, ports: ['https'] },
  'backendtlspolicy-malformed-ca-certificate-ref-test': { backend: 0, ports: ['https'] },
  'backendtlspolicy-invalid-kind-test': { backend: 0, ports: ['https'] },
  'backendtlspolicy-reconcile-test': { backend: 0, ports: ['btls'] },
  'tls-backend-with-client-cert-validation': { backend: 1, ports: ['https'] },
  'backendtlspolicy-grpc-test': { backend: 2, ports: ['btls'] },
  'backendtlspolicy-grpc-host-mismatch-test': { backend: 2, ports: ['btls'] },
  'backendtlspolicy-grpc-cert-mismatch-test': { backend: 2, ports: ['btls'] },
};

/** Addresses no other test uses. */
const ADDRESSES = ['127.0.33.2', '127.0.33.3', '127.0.33.4'];

export interface TlsSide {
  /** ConfigMaps, Secrets and EndpointSlices, as YAML documents. */
  readonly documents: readonly string[];
  readonly clientCertificates: Readonly<Record<ClientCertificateName, DevKeyPair>>;
  /** Documents a status case may write mid-run (StatusCase.apply.made), by name. */
  readonly variants: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

function configMapYaml(name: string, pem: string): string {
  const body = pem
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
  return `# made by the conformance run
apiVersion: v1
kind: ConfigMap
metadata: { name: ${name} }
data:
  ca.crt: |
${body}
`;
}

function endpointSliceYaml(service: string, ports: readonly string[], b: RunningBackend): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${service}-tls, labels: { kubernetes.io/service-name: ${service} } }
addressType: IPv4
ports: [${ports.map((p) => `{ name: ${p}, port: ${b.port} }`).join(', ')}]
endpoints: [{ addresses: ['${b.address}'] }]
`;
}

export async function startTlsSide(): Promise<TlsSide> {
  const backendCa = createDevAuthority('conformance tls-checks CA');
  const unused = createDevAuthority('conformance mismatch CA');
  const clientCa = createDevAuthority('conformance client CA');
  const perPortCa = createDevAuthority('conformance per-port client CA');
  const serving = issueDevCertificate(backendCa, {
    commonName: 'abc.example.com',
    dnsNames: ['abc.example.com', 'other.example.com'],
    uris: ['spiffe://abc.example.com/test-identity'],
  });
  const backends = await Promise.all([
    startEchoBackend({ address: ADDRESSES[0] as string, name: 'tls-backend', tls: serving }),
    startEchoBackend({
      address: ADDRESSES[1] as string,
      name: 'tls-backend-with-client-cert-validation',
      tls: { ...serving, clientCa: backendCa.certificate },
    }),
    startGrpcBackend({ address: ADDRESSES[2] as string, name: 'grpc-infra-backend-v1', tls: serving }),
  ]);
  const client = (ca: typeof clientCa, name: string) =>
    issueDevCertificate(ca, { commonName: name, usage: 'client' });
  const documents = [
    configMapYaml('tls-checks-ca-certificate', backendCa.certificate),
    configMapYaml('mismatch-ca-certificate', unused.certificate),
    configMapYaml('tls-validity-checks-ca-certificate', clientCa.certificate),
    configMapYaml('tls-validity-checks-per-port-ca-certificate', perPortCa.certificate),
    tlsSecretYaml(
      'tls-checks-client-certificate',
      'default',
      client(backendCa, 'tls-checks-client-certificate'),
      'made by the conformance run',
    ),
    ...Object.entries(TLS_SERVICES).map(([service, s]) =>
      endpointSliceYaml(service, s.ports, backends[s.backend] as RunningBackend),
    ),
  ];
  return {
    documents,
    variants: {
      // BackendTLSPolicy's reconcile subtest: its ConfigMap with the CA, then with ca.crt empty.
      'reconcile-ca': configMapYaml('tls-checks-ca-certificate-reconcile-test', backendCa.certificate),
      'reconcile-ca-empty': `apiVersion: v1
kind: ConfigMap
metadata: { name: tls-checks-ca-certificate-reconcile-test }
data: { ca.crt: '' }
`,
    },
    clientCertificates: {
      'tls-validity-checks-client-certificate': client(clientCa, 'client'),
      'tls-validity-checks-per-port-client-certificate': client(perPortCa, 'per-port-client'),
    },
    close: async () => {
      await Promise.all(backends.map((b) => b.close()));
    },
  };
}
