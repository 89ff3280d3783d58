// Gateway `spec.tls` (v1): `frontend` — the client certificates HTTPS listeners validate, by
// default and per port — and `backend.clientCertificateRef`, the certificate the Gateway
// presents to backends it reaches over TLS.
import { type FieldPath, formatFieldPath } from '../diagnostic.js';
import type { Fields, Rec } from '../fields.js';
import type { FrontendValidation, GatewayTls, SecretObjectRef } from '../model.js';
import { GROUP, KIND, NAMESPACE } from '../patterns.js';

/** A reference with group, kind, name and an optional namespace (the Gateway's when unset). */
function objectRef(
  r: Rec,
  at: FieldPath,
  index: number,
  gatewayNamespace: string,
  f: Fields,
  defaultKind: string | undefined,
): SecretObjectRef | undefined {
  f.known(r, at, ['group', 'kind', 'name', 'namespace']);
  const required = defaultKind === undefined;
  const group = f.str(r, 'group', at, { required, maxLength: 253, pattern: GROUP }) ?? '';
  const kind =
    f.str(r, 'kind', at, { required, minLength: 1, maxLength: 63, pattern: KIND }) ?? defaultKind ?? '';
  const name = f.str(r, 'name', at, { required: true, minLength: 1, maxLength: 253 });
  const namespace = f.str(r, 'namespace', at, { minLength: 1, maxLength: 63, pattern: NAMESPACE });
  if (name === undefined) return undefined;
  return { index, group, kind, name, namespace: namespace ?? gatewayNamespace };
}

function validationOf(
  tls: Rec,
  at: FieldPath,
  gatewayNamespace: string,
  f: Fields,
): FrontendValidation | undefined {
  f.known(tls, at, ['validation']);
  const v = f.rec(tls, 'validation', at);
  if (!v) return undefined;
  const vat = [...at, 'validation'];
  f.known(v, vat, ['caCertificateRefs', 'mode']);
  const caCertificateRefs: SecretObjectRef[] = [];
  for (const [r, i] of f.recs(v, 'caCertificateRefs', vat, { required: true, min: 1, max: 16 })) {
    const ref = objectRef(r, [...vat, 'caCertificateRefs', i], i, gatewayNamespace, f, undefined);
    if (ref) caCertificateRefs.push(ref);
  }
  const mode = (f.str(v, 'mode', vat, { enum: ['AllowValidOnly', 'AllowInsecureFallback'] }) ??
    'AllowValidOnly') as FrontendValidation['mode'];
  return { field: formatFieldPath(vat), caCertificateRefs, mode };
}

function frontendOf(frontend: Rec, at: FieldPath, gatewayNamespace: string, f: Fields) {
  f.known(frontend, at, ['default', 'perPort']);
  const def = f.rec(frontend, 'default', at, true);
  const frontendDefault = def ? validationOf(def, [...at, 'default'], gatewayNamespace, f) : undefined;
  const frontendPerPort: GatewayTls['frontendPerPort'][number][] = [];
  for (const [p, i] of f.recs(frontend, 'perPort', at, { max: 64 })) {
    const pat = [...at, 'perPort', i];
    f.known(p, pat, ['port', 'tls']);
    const port = f.int(p, 'port', pat, { required: true, min: 1, max: 65535 });
    const tls = f.rec(p, 'tls', pat, true);
    const validation = tls ? validationOf(tls, [...pat, 'tls'], gatewayNamespace, f) : undefined;
    if (port === undefined) continue;
    if (frontendPerPort.some((o) => o.port === port))
      f.add(
        [...pat, 'port'],
        'rule-violation',
        'Port for TLS configuration must be unique within the Gateway',
      );
    frontendPerPort.push({ port, ...(validation ? { validation } : {}) });
  }
  return { ...(frontendDefault ? { frontendDefault } : {}), frontendPerPort };
}

export function decodeGatewayTls(spec: Rec, gatewayNamespace: string, f: Fields): GatewayTls | undefined {
  const at = ['spec', 'tls'];
  const tls = f.rec(spec, 'tls', ['spec']);
  if (!tls) return undefined;
  f.known(tls, at, ['frontend', 'backend']);
  const frontend = f.rec(tls, 'frontend', at);
  const backend = f.rec(tls, 'backend', at);
  const bat = [...at, 'backend'];
  if (backend) f.known(backend, bat, ['clientCertificateRef']);
  const ref = backend ? f.rec(backend, 'clientCertificateRef', bat) : undefined;
  const client = ref
    ? objectRef(ref, [...bat, 'clientCertificateRef'], 0, gatewayNamespace, f, 'Secret')
    : undefined;
  return {
    ...(frontend ? frontendOf(frontend, [...at, 'frontend'], gatewayNamespace, f) : { frontendPerPort: [] }),
    ...(client ? { backendClientCertificate: client } : {}),
  };
}
