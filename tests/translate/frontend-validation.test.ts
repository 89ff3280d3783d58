// Gateway spec.tls.frontend (client certificates): the validation each HTTPS listener gets (its
// port's perPort entry, else the default; none on HTTP listeners), the listener conditions for
// CA references that are missing, of another kind or not granted, the Gateway's
// InsecureFrontendValidationMode condition, and the Envoy DownstreamTlsContext each mode makes
// (passing `envoy --mode validate`). The certificates are made by the test; no key is committed.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envoyYaml } from '../../extproc/src/envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { createDevAuthority, issueDevCertificate } from '../../extproc/src/local/dev-certificates.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import type { Condition, ObjectStatus } from '../../extproc/src/translate/status.js';
import { b64, indented } from '../support/pem-yaml.js';

const ca = createDevAuthority('frontend-validation test CA');
const clients = createDevAuthority('frontend-validation client CA');
const web = issueDevCertificate(ca, { commonName: 'web.test', dnsNames: ['web.test', '*.web.test'] });

function gateway(name: string, tls: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: ${name} }
spec:
  gatewayClassName: steadfast
  tls:
${tls}
  listeners:
    - { name: http, protocol: HTTP, port: 80 }
    - { name: https, protocol: HTTPS, port: 443, tls: { certificateRefs: [{ name: web-cert }] } }
    - name: a
      protocol: HTTPS
      port: 8443
      hostname: a.web.test
      tls: { certificateRefs: [{ name: web-cert }] }
    - name: b
      protocol: HTTPS
      port: 8443
      hostname: b.web.test
      tls: { certificateRefs: [{ name: web-cert }] }
    - { name: unresolved, protocol: HTTPS, port: 7443, tls: { certificateRefs: [{ name: web-cert }] } }
    - { name: kind, protocol: HTTPS, port: 6443, tls: { certificateRefs: [{ name: web-cert }] } }
    - { name: grant, protocol: HTTPS, port: 5443, tls: { certificateRefs: [{ name: web-cert }] } }
    - { name: open, protocol: HTTPS, port: 4443, tls: { certificateRefs: [{ name: web-cert }] } }
`;
}

const CONFIG = [
  gateway(
    'gw',
    `    frontend:
      default: { validation: { caCertificateRefs: [{ group: '', kind: ConfigMap, name: client-ca }] } }
      perPort:
        - port: 8443
          tls:
            validation:
              mode: AllowInsecureFallback
              caCertificateRefs: [{ group: '', kind: ConfigMap, name: client-ca }]
        - { port: 7443, tls: { validation: { caCertificateRefs: [{ group: '', kind: ConfigMap, name: nope }] } } }
        - { port: 6443, tls: { validation: { caCertificateRefs: [{ group: '', kind: Secret, name: web-cert }] } } }
        - port: 5443
          tls: { validation: { caCertificateRefs: [{ group: '', kind: ConfigMap, name: client-ca, namespace: other }] } }
        - { port: 4443, tls: {} }`,
  ),
  `apiVersion: v1
kind: Secret
metadata: { name: web-cert }
type: kubernetes.io/tls
data:
  tls.crt: ${b64(web.certificate)}
  tls.key: ${b64(web.privateKey)}
`,
  `apiVersion: v1
kind: ConfigMap
metadata: { name: client-ca }
data:
  ca.crt: |
${indented(clients.certificate)}
`,
  `apiVersion: v1
kind: ConfigMap
metadata: { name: client-ca, namespace: other }
data:
  ca.crt: |
${indented(clients.certificate)}
`,
].join('---\n');

const snap = compileSnapshot([{ path: 'frontend.yaml', text: CONFIG }]);
const gw = snap.statuses.find((s) => s.kind === 'Gateway') as ObjectStatus;

function listener(name: string): Record<string, Condition> {
  const l = gw.status.listeners?.find((x) => x.name === name);
  if (!l) throw new Error(`no listener ${name}`);
  return Object.fromEntries(l.conditions.map((c) => [c.type, c]));
}

const OPTIONS = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [] };
const dir = mkdtempSync(join(tmpdir(), 'sf-frontend-validation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Gateway spec.tls.frontend: client certificates', () => {
  it('the default applies where no perPort entry does; a perPort entry overrides it; HTTP listeners have none', () => {
    const byName = new Map(snap.table.listeners.map((l) => [l.name, l]));
    expect(byName.get('http')?.tls).toBeUndefined();
    expect(byName.get('https')?.tls?.clientValidation).toEqual({
      caCertificates: new X509Certificate(clients.certificate).toString(),
      mode: 'AllowValidOnly',
    });
    expect(byName.get('a')?.tls?.clientValidation?.mode).toBe('AllowInsecureFallback');
    expect(byName.get('b')?.tls?.clientValidation?.mode).toBe('AllowInsecureFallback');
    // A perPort entry without validation: that port asks for no client certificate.
    expect(byName.get('open')?.tls?.clientValidation).toBeUndefined();
    for (const name of ['https', 'a', 'open']) {
      expect(listener(name)['Accepted']?.status).toBe('True');
      expect(listener(name)['ResolvedRefs']?.status).toBe('True');
      expect(listener(name)['Programmed']?.status).toBe('True');
    }
  });

  it('a CA reference that is missing, of another kind or not granted takes the listener out, with the reason', () => {
    const cases: [string, string, RegExp][] = [
      [
        'unresolved',
        'InvalidCACertificateRef',
        /perPort\[1\]\.tls\.validation\.caCertificateRefs\[0\]: ConfigMap default\/nope not found/,
      ],
      ['kind', 'InvalidCACertificateKind', /core\/Secret is not supported; use a ConfigMap/],
      [
        'grant',
        'RefNotPermitted',
        /no ReferenceGrant in namespace other allows Gateway from default to ConfigMap client-ca/,
      ],
    ];
    for (const [name, reason, message] of cases) {
      const c = listener(name);
      expect(c['ResolvedRefs']).toMatchObject({ status: 'False', reason });
      expect(c['ResolvedRefs']?.message).toMatch(message);
      expect(c['Accepted']).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
      expect(c['Programmed']?.status).toBe('False');
      expect(snap.table.listeners.some((l) => l.name === name)).toBe(false);
    }
  });

  it('a Gateway with AllowInsecureFallback anywhere says so (InsecureFrontendValidationMode)', () => {
    expect(gw.status.conditions?.find((c) => c.type === 'InsecureFrontendValidationMode')).toMatchObject({
      status: 'True',
      reason: 'ConfigurationChanged',
    });
  });

  it('Envoy requires a valid client certificate for AllowValidOnly, asks and accepts any for AllowInsecureFallback', () => {
    const res = generateGatewayResources(snap.ir, OPTIONS);
    const socket = (port: number) => {
      const l = res.listeners.find((x) => JSON.stringify(x).includes(`"port_value":${port}`)) as {
        filter_chains: { transport_socket: { typed_config: Record<string, unknown> } }[];
      };
      return l.filter_chains.map((c) => c.transport_socket.typed_config);
    };
    const [strict] = socket(443);
    expect(strict?.['require_client_certificate']).toBe(true);
    expect(JSON.stringify(strict)).toContain('"trusted_ca"');
    expect(JSON.stringify(strict)).not.toContain('ACCEPT_UNTRUSTED');
    for (const lax of socket(8443)) {
      expect(lax['require_client_certificate']).toBeUndefined();
      expect(JSON.stringify(lax)).toContain('"trust_chain_verification":"ACCEPT_UNTRUSTED"');
    }
    const [open] = socket(4443);
    expect(JSON.stringify(open)).not.toContain('validation_context');
    const path = join(dir, 'envoy.yaml');
    writeFileSync(path, envoyYaml(generateGatewayConfig(snap.ir, OPTIONS, snap.tls)));
    const r = validateEnvoyConfig(path);
    expect(r.ok, r.output).toBe(true);
  });
});
