// Gateway spec.tls.backend.clientCertificateRef: the Gateway's ResolvedRefs for each kind of bad
// reference, the certificate on the TLS backends of the routes attached to it (and not on those
// of another Gateway), the UpstreamTlsContext naming it as an SDS secret next to the
// listeners' ones, `envoy --mode validate`, and both TLS contexts (client certificates both
// ways) encoded as Envoy's protobuf for ADS. The certificates are made by the test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envoyYaml } from '../../extproc/src/envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import type { ObjectStatus } from '../../extproc/src/translate/status.js';
import { decodeAny, encodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { b64 } from '../support/pem-yaml.js';

const ca = createDevAuthority('backend-client-certificate test CA');
const client = issueDevCertificate(ca, { commonName: 'gateway', usage: 'client' });
const other = issueDevCertificate(ca, { commonName: 'other' });
const pem = ca.certificate
  .trim()
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n');

function gateway(name: string, port: number, ref: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: ${name} }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: ${port} }]
  tls: { backend: { clientCertificateRef: { ${ref} } } }
`;
}

function route(name: string, gw: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: ${gw} }]
  rules: [{ backendRefs: [{ name: secure, port: 443 }] }]
`;
}

const CONFIG = [
  gateway('good', 8001, 'name: gateway-client'),
  gateway('missing', 8002, 'name: nope'),
  gateway('kind', 8003, "group: '', kind: ConfigMap, name: backend-ca"),
  gateway('opaque', 8004, 'name: opaque'),
  gateway('mismatched', 8005, 'name: mismatched'),
  gateway('ungranted', 8006, 'name: gateway-client, namespace: elsewhere'),
  route('via-good', 'good'),
  route('via-missing', 'missing'),
  `apiVersion: v1
kind: Secret
metadata: { name: gateway-client }
type: kubernetes.io/tls
data: { tls.crt: ${b64(client.certificate)}, tls.key: ${b64(client.privateKey)} }
`,
  `apiVersion: v1
kind: Secret
metadata: { name: mismatched }
type: kubernetes.io/tls
data: { tls.crt: ${b64(client.certificate)}, tls.key: ${b64(other.privateKey)} }
`,
  `apiVersion: v1
kind: Secret
metadata: { name: opaque }
type: Opaque
data: {}
`,
  `apiVersion: v1
kind: Service
metadata: { name: secure }
spec: { ports: [{ name: https, port: 443 }] }
`,
  `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: secure, labels: { kubernetes.io/service-name: secure } }
addressType: IPv4
ports: [{ name: https, port: 8443 }]
endpoints: [{ addresses: [127.0.0.9] }]
`,
  `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: { name: secure }
spec:
  targetRefs: [{ group: '', kind: Service, name: secure }]
  validation: { hostname: secure.test, caCertificateRefs: [{ group: '', kind: ConfigMap, name: backend-ca }] }
`,
  `apiVersion: v1
kind: ConfigMap
metadata: { name: backend-ca }
data:
  ca.crt: |
${pem}
`,
].join('---\n');

const snap = compileSnapshot([{ path: 'backend-client.yaml', text: CONFIG }]);
const OPTIONS = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [] };
const STATIC = { material: snap.tls, source: { kind: 'static' } } as const;
const dir = mkdtempSync(join(tmpdir(), 'sf-backend-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function gatewayCondition(name: string, type: string) {
  const gw = snap.statuses.find((s) => s.kind === 'Gateway' && s.metadata.name === name) as ObjectStatus;
  return gw.status.conditions?.find((c) => c.type === type);
}

describe('Gateway spec.tls.backend: the client certificate presented to backends', () => {
  it('a usable Secret resolves; every bad reference is ResolvedRefs=False with its reason, the Gateway stays Accepted', () => {
    expect(gatewayCondition('good', 'ResolvedRefs')).toMatchObject({
      status: 'True',
      reason: 'ResolvedRefs',
    });
    const bad: [string, string, RegExp][] = [
      ['missing', 'InvalidClientCertificateRef', /Secret default\/nope not found/],
      ['kind', 'InvalidClientCertificateRef', /core\/ConfigMap is not supported/],
      ['opaque', 'InvalidClientCertificateRef', /not of type kubernetes.io\/tls/],
      ['mismatched', 'InvalidClientCertificateRef', /tls.key: does not match/],
      ['ungranted', 'RefNotPermitted', /no ReferenceGrant in namespace elsewhere/],
    ];
    for (const [name, reason, message] of bad) {
      const c = gatewayCondition(name, 'ResolvedRefs');
      expect(c, name).toMatchObject({ status: 'False', reason });
      expect(c?.message, name).toMatch(message);
      expect(gatewayCondition(name, 'Accepted')?.status, name).toBe('True');
    }
    // No key material in status.
    expect(JSON.stringify(snap.statuses)).not.toContain('PRIVATE KEY');
  });

  it("the routes of the Gateway with one present it to their TLS backends; another Gateway's routes do not", () => {
    const tlsOf = (name: string) =>
      snap.table.routes.find((r) => r.name === name)?.rules[0]?.backends[0]?.tls?.clientCertificate;
    expect(tlsOf('via-good')).toBe('secret/default/gateway-client');
    expect(tlsOf('via-missing')).toBeUndefined();
    expect(Object.keys(snap.tls.certificates)).toEqual(['secret/default/gateway-client']);
  });

  it('Envoy presents it from SDS on the cluster that has it, and the configuration validates', () => {
    const res = generateGatewayResources(snap.ir, OPTIONS, { kind: 'inline' }, STATIC);
    const contexts = res.clusters.map((c) => JSON.stringify(c['transport_socket'] ?? null));
    const withCert = contexts.filter((c) => c.includes('"tls_certificate_sds_secret_configs"'));
    expect(withCert).toHaveLength(1);
    expect(withCert[0]).toContain('"name":"secret/default/gateway-client"');
    expect(contexts.filter((c) => c.includes('UpstreamTlsContext'))).toHaveLength(2);
    expect(res.secrets.map((s) => s['name'])).toEqual(['secret/default/gateway-client']);
    const path = join(dir, 'envoy.yaml');
    writeFileSync(path, envoyYaml(generateGatewayConfig(snap.ir, OPTIONS, snap.tls)));
    const r = validateEnvoyConfig(path);
    expect(r.ok, r.output).toBe(true);
  });

  it('both TLS contexts encode as Envoy protobuf for ADS and decode to the same fields', () => {
    const upstream = generateGatewayResources(snap.ir, OPTIONS).clusters.find((c) =>
      JSON.stringify(c).includes('tls_certificate_sds_secret_configs'),
    )?.['transport_socket'] as { typed_config: Record<string, unknown> };
    const downstream = {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      require_client_certificate: true,
      common_tls_context: {
        validation_context: {
          trusted_ca: { inline_string: ca.certificate },
          trust_chain_verification: 'ACCEPT_UNTRUSTED',
        },
      },
    };
    for (const context of [upstream.typed_config, downstream]) {
      const back = decodeAny(encodeAny(context as never)) as Record<string, unknown>;
      expect(JSON.stringify(back)).toContain('common_tls_context');
    }
    const back = decodeAny(encodeAny(downstream as never));
    expect(JSON.stringify(back)).toContain('ACCEPT_UNTRUSTED');
  });
});

function routeTo(name: string, parentRefs: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: ${parentRefs}
  rules: [{ backendRefs: [{ name: secure, port: 443 }] }]
`;
}

const MIXED = [
  CONFIG,
  `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: elsewhere }
spec: { controllerName: example.com/another-controller }
`,
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: foreign }
spec:
  gatewayClassName: elsewhere
  listeners: [{ name: http, protocol: HTTP, port: 8007 }]
`,
  routeTo('and-absent', '[{ name: good }, { name: absent }]'),
  routeTo('and-refusing', '[{ name: good }, { name: missing, sectionName: nope }]'),
  routeTo('and-foreign', '[{ name: good }, { name: foreign }]'),
  routeTo('and-missing', '[{ name: good }, { name: missing }]'),
].join('---\n');

describe('the client certificate comes from the Gateways a route attached to, not from its parentRefs', () => {
  const mixed = compileSnapshot([{ path: 'mixed.yaml', text: MIXED }]);
  const tlsOf = (name: string) =>
    mixed.table.routes.find((r) => r.name === name)?.rules[0]?.backends[0]?.tls?.clientCertificate;

  it("a parentRef to a missing, refusing or foreign Gateway does not take Gateway good's certificate away", () => {
    expect(tlsOf('and-absent')).toBe('secret/default/gateway-client');
    expect(tlsOf('and-refusing')).toBe('secret/default/gateway-client');
    expect(tlsOf('and-foreign')).toBe('secret/default/gateway-client');
  });

  it('attached to two Gateways that disagree, its backends present none', () => {
    expect(tlsOf('and-missing')).toBeUndefined();
  });
});
