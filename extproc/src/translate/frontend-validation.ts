// Gateway `spec.tls.frontend` for one HTTPS listener: the validation its port has (perPort,
// else default), its caCertificateRefs resolved to ConfigMaps (`ca.crt`; another namespace
// only with a ReferenceGrant), and what the listener's status says when some or all of them
// cannot be used.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type {
  ConfigMap,
  FrontendValidation,
  Gateway,
  Listener,
  ReferenceGrant,
  SecretObjectRef,
} from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableClientValidation } from '../policy/policy-table.js';
import { caOf } from './backend-tls-policies.js';
import { type Condition, condition } from './status.js';

export interface FrontendProblem {
  readonly reason:
    | typeof Reason.InvalidCACertificateRef
    | typeof Reason.InvalidCACertificateKind
    | typeof Reason.RefNotPermitted;
  readonly message: string;
}

export interface FrontendCheck {
  /** The validation to configure; absent when no CA is usable. */
  readonly validation?: TableClientValidation;
  readonly problems: readonly FrontendProblem[];
}

/** Whether a ReferenceGrant in `namespace` lets Gateways of `gw`'s namespace refer to `kind` `name`. */
export function gatewayGranted(
  gw: Gateway,
  kind: string,
  namespace: string,
  name: string,
  grants: readonly ReferenceGrant[],
): boolean {
  return grants.some(
    (g) =>
      g.namespace === namespace &&
      g.errors.length === 0 &&
      g.from.some((f) => f.group === GATEWAY_GROUP && f.kind === 'Gateway' && f.namespace === gw.namespace) &&
      g.to.some((t) => t.group === '' && t.kind === kind && (t.name === undefined || t.name === name)),
  );
}

/** The validation a listener's port has: its perPort entry, else the default. */
function validationFor(gw: Gateway, l: Listener): FrontendValidation | undefined {
  const perPort = gw.tls?.frontendPerPort.find((p) => p.port === l.port);
  return perPort ? perPort.validation : gw.tls?.frontendDefault;
}

function resolveCa(
  gw: Gateway,
  ref: SecretObjectRef,
  configMaps: ReadonlyMap<string, ConfigMap>,
  grants: readonly ReferenceGrant[],
): string[] | FrontendProblem {
  if (ref.group !== '' || ref.kind !== 'ConfigMap') {
    const kind = `${ref.group === '' ? 'core' : ref.group}/${ref.kind}`;
    return { reason: Reason.InvalidCACertificateKind, message: `${kind} is not supported; use a ConfigMap` };
  }
  if (ref.namespace !== gw.namespace && !gatewayGranted(gw, 'ConfigMap', ref.namespace, ref.name, grants)) {
    return {
      reason: Reason.RefNotPermitted,
      message: `no ReferenceGrant in namespace ${ref.namespace} allows Gateway from ${gw.namespace} to ConfigMap ${ref.name}`,
    };
  }
  const key = `${ref.namespace}/${ref.name}`;
  const found = caOf(configMaps.get(key), key);
  return typeof found === 'string' ? { reason: Reason.InvalidCACertificateRef, message: found } : found;
}

/** The client validation of an HTTPS listener; undefined when its Gateway asks for none there. */
export function checkFrontendValidation(
  gw: Gateway,
  l: Listener,
  configMaps: ReadonlyMap<string, ConfigMap>,
  grants: readonly ReferenceGrant[],
): FrontendCheck | undefined {
  const v = validationFor(gw, l);
  if (!v) return undefined;
  const pems: string[] = [];
  const problems: FrontendProblem[] = [];
  for (const ref of v.caCertificateRefs) {
    const found = resolveCa(gw, ref, configMaps, grants);
    if (Array.isArray(found)) pems.push(...found);
    else problems.push({ ...found, message: `${v.field}.caCertificateRefs[${ref.index}]: ${found.message}` });
  }
  if (pems.length === 0) return { problems };
  return { validation: { caCertificates: pems.join(''), mode: v.mode }, problems };
}

/** Whether any of the Gateway's frontend validations lets clients through without a valid certificate. */
export function insecureFallback(gw: Gateway): boolean {
  const all = [gw.tls?.frontendDefault, ...(gw.tls?.frontendPerPort ?? []).map((p) => p.validation)];
  return all.some((v) => v?.mode === 'AllowInsecureFallback');
}

/** The Gateway condition upstream asks for when some listener lets unverified clients through. */
export function insecureCondition(generation: number | undefined): Condition {
  return condition(
    T.InsecureFrontendValidationMode,
    'True',
    Reason.ConfigurationChanged,
    'spec.tls.frontend uses AllowInsecureFallback: clients without a valid certificate are let through',
    generation,
  );
}
