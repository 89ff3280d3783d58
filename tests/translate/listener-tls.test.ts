// HTTPS listeners (tls.mode Terminate): certificateRefs to Secrets of type kubernetes.io/tls,
// the listener conditions the API defines for a missing, malformed or mismatched key pair, a
// cross-namespace reference without a ReferenceGrant and Passthrough, and the Envoy
// configuration (SNI filter chains, ALPN, TLS 1.2) passing `envoy --mode validate`. The
// certificates are made by the test; no key is committed.
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
import { b64 } from '../support/pem-yaml.js';

const ca = createDevAuthority('listener-tls test CA');
const web = issueDevCertificate(ca, { commonName: 'web.test', dnsNames: ['web.test'] });
const api = issueDevCertificate(ca, { commonName: 'api.test', dnsNames: ['api.test'] });

function secret(name: string, crt: string, key: string, extra = ''): string {
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name}${extra} }
type: kubernetes.io/tls
data:
  tls.crt: ${b64(crt)}
  tls.key: ${b64(key)}
`;
}

const CONFIG = [
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners:
    - { name: http, protocol: HTTP, port: 80 }
    - name: web
      protocol: HTTPS
      port: 443
      hostname: web.test
      tls: { certificateRefs: [{ name: web-cert }] }
    - name: api
      protocol: HTTPS
      port: 443
      hostname: api.test
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, group: '', name: api-cert, namespace: certs }] }
    - name: mismatched
      protocol: HTTPS
      port: 8443
      hostname: mismatched.test
      tls: { certificateRefs: [{ name: mismatched-cert }] }
    - name: missing
      protocol: HTTPS
      port: 8443
      hostname: missing.test
      tls: { certificateRefs: [{ name: nope }] }
    - name: foreign
      protocol: HTTPS
      port: 8443
      hostname: foreign.test
      tls: { certificateRefs: [{ name: other-cert, namespace: other }] }
    - name: garbled
      protocol: HTTPS
      port: 8443
      hostname: garbled.test
      tls: { certificateRefs: [{ name: garbled-cert }] }
    - name: pass
      protocol: HTTPS
      port: 9443
      tls: { mode: Passthrough }
`,
  secret('web-cert', web.certificate, web.privateKey),
  secret('api-cert', api.certificate, api.privateKey, ', namespace: certs'),
  secret('other-cert', api.certificate, api.privateKey, ', namespace: other'),
  secret('mismatched-cert', web.certificate, api.privateKey),
  `apiVersion: v1
kind: Secret
metadata: { name: garbled-cert }
type: kubernetes.io/tls
stringData:
  tls.crt: not a certificate
  tls.key: not a key
`,
  `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: { name: gateways-to-certs, namespace: certs }
spec:
  from: [{ group: gateway.networking.k8s.io, kind: Gateway, namespace: default }]
  to: [{ group: '', kind: Secret }]
`,
].join('---\n');

const snap = compileSnapshot([{ path: 'tls.yaml', text: CONFIG }]);

function listener(name: string): Record<string, Condition> {
  const gw = snap.statuses.find((s) => s.kind === 'Gateway') as ObjectStatus;
  const l = gw.status.listeners?.find((x) => x.name === name);
  if (!l) throw new Error(`no listener ${name}`);
  return Object.fromEntries(l.conditions.map((c) => [c.type, c]));
}

const dir = mkdtempSync(join(tmpdir(), 'sf-listener-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('HTTPS listeners: certificate references', () => {
  it('a same-namespace Secret and a granted cross-namespace one resolve and program the listener', () => {
    for (const name of ['web', 'api']) {
      expect(listener(name)['Accepted']?.status).toBe('True');
      expect(listener(name)['ResolvedRefs']?.status).toBe('True');
      expect(listener(name)['Programmed']?.status).toBe('True');
    }
    expect(Object.keys(snap.tls.certificates).sort()).toEqual([
      'secret/certs/api-cert',
      'secret/default/web-cert',
    ]);
    expect(snap.table.listeners.find((l) => l.name === 'web')?.tls).toEqual({
      certificates: ['secret/default/web-cert'],
    });
  });

  it('a key that does not match the certificate is InvalidCertificateRef, naming the Secret file and field', () => {
    const c = listener('mismatched');
    expect(c['ResolvedRefs']).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    expect(c['ResolvedRefs']?.message).toMatch(
      /spec\.listeners\[3\]\.tls\.certificateRefs\[0\]: Secret default\/mismatched-cert data\.tls\.key \(tls\.yaml:\d+\): does not match/,
    );
    expect(c['Programmed']).toMatchObject({ status: 'False', reason: 'Invalid' });
  });

  it('a missing Secret and a malformed certificate are InvalidCertificateRef', () => {
    expect(listener('missing')['ResolvedRefs']).toMatchObject({
      status: 'False',
      reason: 'InvalidCertificateRef',
    });
    expect(listener('missing')['ResolvedRefs']?.message).toContain('Secret default/nope not found');
    const garbled = listener('garbled')['ResolvedRefs'];
    expect(garbled).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    expect(garbled?.message).toMatch(/stringData\.tls\.crt \(tls\.yaml:\d+\): holds no PEM certificate/);
  });

  it('another namespace without a ReferenceGrant is RefNotPermitted', () => {
    expect(listener('foreign')['ResolvedRefs']).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
  });

  it('Passthrough is reported unsupported', () => {
    expect(listener('pass')['Accepted']).toMatchObject({ status: 'False', reason: 'UnsupportedProtocol' });
    expect(listener('pass')['Accepted']?.message).toContain('Passthrough is not supported');
  });

  it('never puts key material in the table, the statuses or the diagnostics', () => {
    const visible = JSON.stringify([snap.table, snap.statuses, snap.errors, snap.diagnostics]);
    expect(visible).not.toContain('PRIVATE KEY');
    expect(visible).not.toContain(b64(web.privateKey).slice(0, 40));
  });

  it('Envoy gets one SNI filter chain per hostname, ALPN h2 and http/1.1, TLS 1.2 at least', () => {
    const options = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [] };
    const res = generateGatewayResources(snap.ir, options);
    const https = res.listeners.find((l) => JSON.stringify(l).includes('server_names')) as {
      filter_chains: { filter_chain_match?: { server_names: string[] }; transport_socket: unknown }[];
      listener_filters: unknown[];
    };
    expect(https.filter_chains.map((c) => c.filter_chain_match?.server_names)).toEqual([
      ['web.test'],
      ['api.test'],
    ]);
    expect(JSON.stringify(https.filter_chains[0]?.transport_socket)).toContain(
      '"alpn_protocols":["h2","http/1.1"]',
    );
    expect(JSON.stringify(https.filter_chains[0]?.transport_socket)).toContain('TLSv1_2');
    const path = join(dir, 'envoy.yaml');
    writeFileSync(path, envoyYaml(generateGatewayConfig(snap.ir, options, snap.tls)));
    const r = validateEnvoyConfig(path);
    expect(r.output).toContain('OK');
    expect(r.ok).toBe(true);
  });
});

describe('Secret decoding', () => {
  it('reports bad base64 and a missing tls.key with file and field, never quoting the value', () => {
    const s = compileSnapshot([
      {
        path: 's.yaml',
        text: `apiVersion: v1
kind: Secret
metadata: { name: s }
type: kubernetes.io/tls
data:
  tls.crt: "c2VjcmV0LXZhbHVl!"
`,
      },
    ]);
    const lines = s.errors.map((e) => `${e.file}:${e.line} ${e.field}: ${e.message}`);
    expect(lines).toEqual([
      's.yaml:6 data.tls.crt: is not valid base64 (standard alphabet, padded, no line breaks)',
      's.yaml:6 data.tls.key: Required value for type kubernetes.io/tls',
    ]);
    expect(JSON.stringify(s.statuses)).not.toContain('c2VjcmV0LXZhbHVl');
  });
});
