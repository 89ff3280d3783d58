// BackendTLSPolicy: what each policy gives the Services it targets (how to verify them, or
// why the gateway must not connect), and its conditions: ResolvedRefs on every ancestor
// (True, or False with InvalidCACertificateRef / InvalidKind), Accepted=False with
// NoValidCACertificate when no caCertificateRefs entry is usable.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import { formatFieldPath } from '../gatewayapi/diagnostic.js';
import type { BackendTLSPolicy, ConfigMap, Model } from '../gatewayapi/model.js';
import type { TableBackendTls } from '../policy/policy-table.js';
import { parseCertificates } from './certificates.js';
import { type PolicyEvaluation, policyId } from './policy-evaluation.js';
import { condition } from './status.js';

/** What a BackendTLSPolicy gives a Service: how to verify it, or why the gateway must not connect. */
export type BackendTlsClaim = TableBackendTls | { readonly invalid: string };

interface Trust {
  readonly caCertificates?: string;
  readonly problems: readonly string[];
  readonly kindProblem: boolean;
}

/** Claims every BackendTLSPolicy's targets in `ev`; the winners' claims land in `out` by `<ns>/<service>[/<port>]`. */
export function claimBackendTls(model: Model, ev: PolicyEvaluation, out: Map<string, BackendTlsClaim>): void {
  const configMaps = new Map(model.configMaps.map((c) => [`${c.namespace}/${c.name}`, c]));
  for (const p of model.backendTlsPolicies) {
    const trust = backendTrust(p, configMaps);
    const claim = tlsClaim(p, trust);
    ev.claimAll(p, p.targetRefs, false, [['tls', (t) => out.set(t.slice('service/'.length), claim)]]);
    if (p.errors.length === 0) resolvedRefs(p, trust, 'invalid' in claim, ev);
  }
}

function tlsClaim(p: BackendTLSPolicy, trust: Trust): BackendTlsClaim {
  if (trust.caCertificates === undefined && p.wellKnownCACertificates === undefined) {
    return {
      invalid: `BackendTLSPolicy ${p.namespace}/${p.name} has no valid CA certificate (${trust.problems.join('; ')}): the gateway does not connect unverified`,
    };
  }
  return {
    policy: policyId(p),
    hostname: p.hostname ?? '',
    subjectAltNames: p.subjectAltNames,
    ...(trust.caCertificates !== undefined ? { caCertificates: trust.caCertificates } : {}),
  };
}

/**
 * ResolvedRefs on every targetRef (so on every ancestor). The targets are claimed either way
 * (a policy without a valid CA fails its backends closed); the conditions say why.
 */
function resolvedRefs(p: BackendTLSPolicy, trust: Trust, unusable: boolean, ev: PolicyEvaluation): void {
  const gen = p.generation;
  if (trust.problems.length === 0) {
    const resolved = condition(T.ResolvedRefs, 'True', Reason.ResolvedRefs, 'all references resolved', gen);
    for (const [ref, st] of ev.refsOf(p)) ev.setStatus(p, ref, st.condition, st.target, [resolved]);
    return;
  }
  const reason = trust.kindProblem ? Reason.InvalidKind : Reason.InvalidCACertificateRef;
  const resolved = condition(T.ResolvedRefs, 'False', reason, trust.problems.join('; '), gen);
  const noCa = condition(
    T.Accepted,
    'False',
    Reason.NoValidCACertificate,
    'no caCertificateRefs entry is usable; requests to the targeted backends answer 500',
    gen,
  );
  for (const [ref, st] of ev.refsOf(p)) {
    const accepted = unusable && st.condition.status === 'True' ? noCa : st.condition;
    ev.setStatus(p, ref, accepted, st.target, [resolved]);
  }
}

/** The CA certificates a BackendTLSPolicy trusts from its caCertificateRefs, and what is wrong with the others. */
function backendTrust(p: BackendTLSPolicy, configMaps: ReadonlyMap<string, ConfigMap>): Trust {
  const pems: string[] = [];
  const problems: string[] = [];
  let kindProblem = false;
  for (const ref of p.caCertificateRefs) {
    const field = `spec.validation.caCertificateRefs[${ref.index}]`;
    if (ref.group !== '' || ref.kind !== 'ConfigMap') {
      kindProblem = true;
      problems.push(
        `${field}: ${ref.group === '' ? 'core' : ref.group}/${ref.kind} is not supported; use a ConfigMap`,
      );
      continue;
    }
    const found = caOf(configMaps.get(`${p.namespace}/${ref.name}`), `${p.namespace}/${ref.name}`);
    if (typeof found === 'string') problems.push(`${field}: ${found}`);
    else pems.push(...found);
  }
  return { ...(pems.length > 0 ? { caCertificates: pems.join('') } : {}), problems, kindProblem };
}

/** The PEM certificates of a ConfigMap's `ca.crt`, or what is wrong with it. */
export function caOf(cm: ConfigMap | undefined, key: string): string[] | string {
  if (!cm) return `ConfigMap ${key} not found`;
  const ca = cm.data['ca.crt'];
  if (!ca) return `ConfigMap ${cm.namespace}/${cm.name} has no ca.crt`;
  const certs = parseCertificates(ca.value);
  if (typeof certs === 'string') {
    const path = ['data', 'ca.crt'];
    return `ConfigMap ${cm.namespace}/${cm.name} ${formatFieldPath(path)} (${cm.origin.source.file}:${cm.origin.lineOf(path)}) ${certs}`;
  }
  return certs.map((c) => c.toString());
}
