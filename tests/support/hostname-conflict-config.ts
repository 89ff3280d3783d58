// Two Gateways whose HTTPS listeners share port 443 and hostname shared.test: `open` (first)
// asks for no client certificate, `strict` (later) requires one (spec.tls.frontend) and also
// listens on 8443 alone. Each has one route. The certificates are made at run time.
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';
import { b64, indented } from './pem-yaml.js';

const ca = createDevAuthority('hostname-conflict test CA');
const clients = createDevAuthority('hostname-conflict client CA');
const shared = issueDevCertificate(ca, { commonName: 'shared.test', dnsNames: ['shared.test'] });

function route(name: string, gateway: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: ${gateway} }]
  hostnames: [shared.test]
  rules: [{ backendRefs: [{ name: app, port: 80 }] }]
`;
}

export const HOSTNAME_CONFLICT_CONFIG = [
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: open }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: https, protocol: HTTPS, port: 443, hostname: shared.test, tls: { certificateRefs: [{ name: shared-cert }] } }
`,
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: strict }
spec:
  gatewayClassName: steadfast
  tls:
    frontend:
      default: { validation: { caCertificateRefs: [{ group: '', kind: ConfigMap, name: client-ca }] } }
  listeners:
    - { name: https, protocol: HTTPS, port: 443, hostname: shared.test, tls: { certificateRefs: [{ name: shared-cert }] } }
    - { name: alone, protocol: HTTPS, port: 8443, hostname: shared.test, tls: { certificateRefs: [{ name: shared-cert }] } }
`,
  route('via-open', 'open'),
  route('via-strict', 'strict'),
  `apiVersion: v1
kind: Secret
metadata: { name: shared-cert }
type: kubernetes.io/tls
data: { tls.crt: ${b64(shared.certificate)}, tls.key: ${b64(shared.privateKey)} }
`,
  `apiVersion: v1
kind: ConfigMap
metadata: { name: client-ca }
data:
  ca.crt: |
${indented(clients.certificate)}
`,
  `apiVersion: v1
kind: Service
metadata: { name: app }
spec: { ports: [{ port: 80, targetPort: 9000 }] }
`,
].join('---\n');
