// Gateway `spec.tls.backend.clientCertificateRef`: the key pair the Gateway presents to the
// backends it reaches over TLS (those a BackendTLSPolicy targets). A Secret of type
// kubernetes.io/tls, in another namespace only with a ReferenceGrant; anything else leaves the
// Gateway ResolvedRefs=False (InvalidClientCertificateRef or RefNotPermitted) and presents none.
import { ConditionType as T, Reason, type ReasonName } from '../gatewayapi/codes.js';
import { SECRET_TYPE_TLS } from '../gatewayapi/decode/config-data.js';
import type { Gateway, ReferenceGrant, Secret, SecretObjectRef } from '../gatewayapi/model.js';
import type { CertificateMaterial } from '../policy/tls-material.js';
import { checkKeyPair } from './certificates.js';
import { gatewayGranted } from './frontend-validation.js';
import { type Condition, condition } from './status.js';

export interface BackendClientCertificate {
  /** The certificate's id in TlsMaterial (`secret/<ns>/<name>`), when usable. */
  readonly id?: string;
  /** The Gateway's ResolvedRefs for it. */
  readonly condition: Condition;
}

const FIELD = 'spec.tls.backend.clientCertificateRef';

/** Why the reference cannot be used, or its key pair. */
function resolve(
  gw: Gateway,
  ref: SecretObjectRef,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
): CertificateMaterial | { reason: ReasonName; message: string } {
  const invalid = (message: string) => ({
    reason: Reason.InvalidClientCertificateRef as ReasonName,
    message,
  });
  if (ref.group !== '' || ref.kind !== 'Secret')
    return invalid(
      `${ref.group === '' ? 'core' : ref.group}/${ref.kind} is not supported; use a core Secret`,
    );
  if (ref.namespace !== gw.namespace && !gatewayGranted(gw, 'Secret', ref.namespace, ref.name, grants)) {
    return {
      reason: Reason.RefNotPermitted,
      message: `no ReferenceGrant in namespace ${ref.namespace} allows Gateway from ${gw.namespace} to Secret ${ref.name}`,
    };
  }
  const secret = secrets.get(`${ref.namespace}/${ref.name}`);
  if (!secret) return invalid(`Secret ${ref.namespace}/${ref.name} not found`);
  const crt = secret.data['tls.crt'];
  const key = secret.data['tls.key'];
  if (secret.type !== SECRET_TYPE_TLS || !crt || !key)
    return invalid(
      `Secret ${ref.namespace}/${ref.name} is not of type ${SECRET_TYPE_TLS} with tls.crt and tls.key`,
    );
  const problem = checkKeyPair(crt.value, key.value);
  if (problem) return invalid(`Secret ${ref.namespace}/${ref.name} ${problem.key}: ${problem.message}`);
  return { certificateChain: crt.value, privateKey: key.value };
}

/** The Gateway's backend client certificate (its key pair put in `material`), or undefined when it names none. */
export function backendClientCertificate(
  gw: Gateway,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  material: Record<string, CertificateMaterial>,
): BackendClientCertificate | undefined {
  const ref = gw.tls?.backendClientCertificate;
  if (!ref) return undefined;
  const found = resolve(gw, ref, secrets, grants);
  const gen = gw.generation;
  if ('reason' in found) {
    const message = `${FIELD}: ${found.message}; no client certificate is presented to backends`;
    return { condition: condition(T.ResolvedRefs, 'False', found.reason, message, gen) };
  }
  const id = `secret/${ref.namespace}/${ref.name}`;
  material[id] = found;
  return {
    id,
    condition: condition(T.ResolvedRefs, 'True', Reason.ResolvedRefs, 'all references resolved', gen),
  };
}
