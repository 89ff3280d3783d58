// HTTPS listeners: their certificateRefs resolved to Secrets of type kubernetes.io/tls,
// cross-namespace only with a ReferenceGrant, and each key pair checked. The key material
// leaves here in TlsMaterial, never in the PolicyTable (which the admin API serves).
import { formatFieldPath } from '../gatewayapi/diagnostic.js';
import type { Gateway, Listener, ReferenceGrant, Secret } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import { SECRET_TYPE_TLS } from '../gatewayapi/decode/config-data.js';
import type { CertificateMaterial } from '../policy/tls-material.js';
import { checkKeyPair } from './certificates.js';

export interface CertificateProblem {
  readonly reason: 'InvalidCertificateRef' | 'RefNotPermitted';
  readonly message: string;
}

export interface ListenerCertificates {
  /** Ids of the usable certificates, in certificateRefs order. */
  readonly ids: readonly string[];
  readonly problems: readonly CertificateProblem[];
}

function certificateId(namespace: string, name: string): string {
  return `secret/${namespace}/${name}`;
}

function granted(gw: Gateway, namespace: string, name: string, grants: readonly ReferenceGrant[]): boolean {
  return grants.some(
    (g) =>
      g.namespace === namespace &&
      g.errors.length === 0 &&
      g.from.some((f) => f.group === GATEWAY_GROUP && f.kind === 'Gateway' && f.namespace === gw.namespace) &&
      g.to.some((t) => t.group === '' && t.kind === 'Secret' && (t.name === undefined || t.name === name)),
  );
}

/** `Secret default/web (tls/web.yaml:9) data.tls.key` — where a problem in a Secret is. */
function at(s: Secret, key: string): string {
  const path = [s.data[key]?.from ?? 'data', key];
  return `Secret ${s.namespace}/${s.name} ${formatFieldPath(path)} (${s.origin.source.file}:${s.origin.lineOf(path)})`;
}

export function resolveListenerCertificates(
  gw: Gateway,
  listener: Listener,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  material: Record<string, CertificateMaterial>,
): ListenerCertificates {
  const ids: string[] = [];
  const problems: CertificateProblem[] = [];
  for (const ref of listener.tls?.certificateRefs ?? []) {
    const field = `spec.listeners[${listener.index}].tls.certificateRefs[${ref.index}]`;
    const bad = (message: string) =>
      problems.push({ reason: 'InvalidCertificateRef', message: `${field}: ${message}` });
    if (ref.group !== '' || ref.kind !== 'Secret') {
      bad(`${ref.group === '' ? 'core' : ref.group}/${ref.kind} is not supported; use a core Secret`);
      continue;
    }
    if (ref.namespace !== gw.namespace && !granted(gw, ref.namespace, ref.name, grants)) {
      problems.push({
        reason: 'RefNotPermitted',
        message: `${field}: no ReferenceGrant in namespace ${ref.namespace} allows Gateway from ${gw.namespace} to Secret ${ref.name}`,
      });
      continue;
    }
    const secret = secrets.get(`${ref.namespace}/${ref.name}`);
    if (!secret) {
      bad(`Secret ${ref.namespace}/${ref.name} not found`);
      continue;
    }
    if (secret.type !== SECRET_TYPE_TLS) {
      bad(`Secret ${ref.namespace}/${ref.name} is of type ${secret.type}, not ${SECRET_TYPE_TLS}`);
      continue;
    }
    const crt = secret.data['tls.crt'];
    const key = secret.data['tls.key'];
    if (secret.errors.length > 0 || !crt || !key) {
      const e = secret.errors[0];
      bad(
        `Secret ${ref.namespace}/${ref.name} is invalid` +
          (e
            ? `: ${formatFieldPath(e.path)} (${secret.origin.source.file}:${secret.origin.lineOf(e.path)}) ${e.message}`
            : ''),
      );
      continue;
    }
    const problem = checkKeyPair(crt.value, key.value);
    if (problem) {
      bad(`${at(secret, problem.key)}: ${problem.message}`);
      continue;
    }
    const id = certificateId(ref.namespace, ref.name);
    material[id] = { certificateChain: crt.value, privateKey: key.value };
    if (!ids.includes(id)) ids.push(id);
  }
  return { ids, problems };
}
