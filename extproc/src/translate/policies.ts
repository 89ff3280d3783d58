// Direct-attached policies (GEP-713): BackendTLSPolicy, XBackendTrafficPolicy and the
// seed's SessionPersistencePolicy. Resolves targets, settles conflicts (the oldest policy
// wins, then namespace/name), and reports one ancestor status per target.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import { formatFieldPath } from '../gatewayapi/diagnostic.js';
import type {
  BackendTLSPolicy,
  ConfigMap,
  Model,
  ModelObject,
  PolicyTargetRef,
  SessionSpec,
} from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableBackendTls, TableRetryConstraint } from '../policy/policy-table.js';
import { parseCertificates } from './certificates.js';
import { olderFirst } from './precedence.js';
import {
  CONTROLLER_NAME,
  type Condition,
  type ParentReferenceStatus,
  type PolicyAncestorStatus,
  condition,
} from './status.js';

export interface SessionSource {
  readonly spec: SessionSpec;
  /** `sessionpersistencepolicy/<ns>/<name>` or `xbackendtrafficpolicy/<ns>/<name>`. */
  readonly from: string;
}

/** What a BackendTLSPolicy gives a Service: how to verify it, or why the gateway must not connect. */
export type BackendTlsClaim = TableBackendTls | { readonly invalid: string };

export interface PolicyResult {
  /** By `<ns>/<service>` or `<ns>/<service>/<port name>`. */
  readonly backendTls: Map<string, BackendTlsClaim>;
  readonly retryConstraints: Map<string, TableRetryConstraint>;
  /** Session persistence by target: `service/<ns>/<name>`, `route/<kind>/<ns>/<name>`, `rule/<kind>/<ns>/<name>/<section>`. */
  readonly sessions: Map<string, SessionSource>;
  /** Per policy `<kind>/<ns>/<name>`: each targetRef, its target key when found, and its condition. */
  readonly targets: Map<string, PolicyTargetState[]>;
}

export interface PolicyTargetState {
  readonly ref: PolicyTargetRef;
  readonly namespace: string;
  /** `service/<ns>/<name>[/<port name>]`, `route/<kind>/<ns>/<name>` or `rule/<kind>/<ns>/<name>/<rule>`. */
  readonly target?: string;
  readonly condition: Condition;
  /** Further conditions for every ancestor (BackendTLSPolicy's ResolvedRefs). */
  readonly extra?: readonly Condition[];
}

type Feature = 'tls' | 'retryConstraint' | 'session';

interface Claim {
  readonly policy: ModelObject;
  readonly ref: PolicyTargetRef;
  readonly target: string;
  readonly feature: Feature;
  readonly apply: () => void;
}

function policyId(p: ModelObject): string {
  return `${p.kind.toLowerCase()}/${p.namespace}/${p.name}`;
}

export function evaluatePolicies(model: Model): PolicyResult {
  const result: PolicyResult = {
    backendTls: new Map(),
    retryConstraints: new Map(),
    sessions: new Map(),
    targets: new Map(),
  };
  const services = new Set(model.services.map((s) => `${s.namespace}/${s.name}`));
  const routes = new Map(model.routes.map((r) => [`${r.kind}/${r.namespace}/${r.name}`, r]));
  const claims: Claim[] = [];
  type RefStatus = { condition: Condition; target?: string; extra?: readonly Condition[] };
  const statuses = new Map<ModelObject, Map<PolicyTargetRef, RefStatus>>();
  const setStatus = (
    p: ModelObject,
    ref: PolicyTargetRef,
    c: Condition,
    target?: string,
    extra?: readonly Condition[],
  ) => {
    const m = statuses.get(p) ?? new Map<PolicyTargetRef, RefStatus>();
    const keep = target ?? m.get(ref)?.target;
    const keepExtra = extra ?? m.get(ref)?.extra;
    m.set(ref, {
      condition: c,
      ...(keep !== undefined ? { target: keep } : {}),
      ...(keepExtra !== undefined ? { extra: keepExtra } : {}),
    });
    statuses.set(p, m);
  };

  /** The target's key, or a reason the target cannot be used. */
  const target = (p: ModelObject, ref: PolicyTargetRef, allowRoutes: boolean): string | Condition => {
    const gen = p.generation;
    if (ref.group === '' && ref.kind === 'Service') {
      const key = `${p.namespace}/${ref.name}`;
      if (!services.has(key))
        return condition(T.Accepted, 'False', Reason.TargetNotFound, `Service ${key} not found`, gen);
      return ref.sectionName !== undefined ? `service/${key}/${ref.sectionName}` : `service/${key}`;
    }
    if (
      allowRoutes &&
      ref.group === GATEWAY_GROUP &&
      (ref.kind === 'HTTPRoute' || ref.kind === 'GRPCRoute')
    ) {
      const route = routes.get(`${ref.kind}/${p.namespace}/${ref.name}`);
      if (!route)
        return condition(
          T.Accepted,
          'False',
          Reason.TargetNotFound,
          `${ref.kind} ${p.namespace}/${ref.name} not found`,
          gen,
        );
      if (ref.sectionName === undefined) return `route/${ref.kind}/${p.namespace}/${ref.name}`;
      if (!route.rules.some((r) => r.name === ref.sectionName)) {
        return condition(
          T.Accepted,
          'False',
          Reason.TargetNotFound,
          `${ref.kind} ${p.namespace}/${ref.name} has no rule named ${ref.sectionName}`,
          gen,
        );
      }
      return `rule/${ref.kind}/${p.namespace}/${ref.name}/${ref.sectionName}`;
    }
    const allowed = allowRoutes ? 'Service, HTTPRoute or GRPCRoute' : 'core Service';
    return condition(
      T.Accepted,
      'False',
      Reason.Invalid,
      `targetRef ${ref.group || 'core'}/${ref.kind} is not supported; use ${allowed}`,
      gen,
    );
  };

  const claimAll = (
    p: ModelObject,
    refs: readonly PolicyTargetRef[],
    allowRoutes: boolean,
    features: [Feature, (t: string) => void][],
  ) => {
    for (const ref of refs) {
      if (p.errors.length > 0) {
        setStatus(
          p,
          ref,
          condition(
            T.Accepted,
            'False',
            Reason.Invalid,
            `the policy has schema errors: ${p.errors[0]?.message ?? ''}`,
            p.generation,
          ),
        );
        continue;
      }
      const t = target(p, ref, allowRoutes);
      if (typeof t !== 'string') {
        setStatus(p, ref, t);
        continue;
      }
      setStatus(p, ref, condition(T.Accepted, 'True', Reason.Accepted, 'accepted', p.generation), t);
      for (const [feature, apply] of features)
        claims.push({ policy: p, ref, target: t, feature, apply: () => apply(t) });
    }
  };

  const configMaps = new Map(model.configMaps.map((c) => [`${c.namespace}/${c.name}`, c]));
  for (const p of model.backendTlsPolicies) {
    const trust = backendTrust(p, configMaps);
    const claim: BackendTlsClaim =
      trust.caCertificates === undefined && p.wellKnownCACertificates === undefined
        ? {
            invalid: `BackendTLSPolicy ${p.namespace}/${p.name} has no valid CA certificate (${trust.problems.join('; ')}): the gateway does not connect unverified`,
          }
        : {
            policy: policyId(p),
            hostname: p.hostname ?? '',
            subjectAltNames: p.subjectAltNames,
            ...(trust.caCertificates !== undefined ? { caCertificates: trust.caCertificates } : {}),
          };
    claimAll(p, p.targetRefs, false, [
      ['tls', (t) => result.backendTls.set(t.slice('service/'.length), claim)],
    ]);
    if (trust.problems.length === 0 || p.errors.length > 0) continue;
    // The targets are claimed either way (a policy without a valid CA fails its backends
    // closed); the conditions say why.
    const resolved = condition(
      T.ResolvedRefs,
      'False',
      trust.kindProblem ? Reason.InvalidKind : Reason.InvalidCACertificateRef,
      trust.problems.join('; '),
      p.generation,
    );
    for (const [ref, st] of statuses.get(p) ?? []) {
      const accepted =
        'invalid' in claim && st.condition.status === 'True'
          ? condition(
              T.Accepted,
              'False',
              Reason.NoValidCACertificate,
              'no caCertificateRefs entry is usable; requests to the targeted backends answer 500',
              p.generation,
            )
          : st.condition;
      setStatus(p, ref, accepted, st.target, [resolved]);
    }
  }
  for (const p of model.backendTrafficPolicies) {
    const features: [Feature, (t: string) => void][] = [];
    const rc = p.retryConstraint;
    if (rc)
      features.push([
        'retryConstraint',
        (t) => result.retryConstraints.set(t.slice('service/'.length), { policy: policyId(p), ...rc }),
      ]);
    const session = p.session;
    if (session)
      features.push(['session', (t) => result.sessions.set(t, { spec: session, from: policyId(p) })]);
    claimAll(p, p.targetRefs, false, features);
  }
  for (const p of model.sessionPolicies) {
    const session = p.session;
    claimAll(
      p,
      p.targetRefs,
      true,
      session ? [['session', (t) => result.sessions.set(t, { spec: session, from: policyId(p) })]] : [],
    );
  }

  // Conflicts: per target and feature, the oldest policy wins.
  const groups = new Map<string, Claim[]>();
  for (const c of claims) {
    const key = `${c.feature}|${c.target}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  for (const group of groups.values()) {
    const sorted = [...group].sort((a, b) => olderFirst(a.policy, b.policy));
    const winner = sorted[0];
    if (!winner) continue;
    winner.apply();
    for (const loser of sorted.slice(1)) {
      setStatus(
        loser.policy,
        loser.ref,
        condition(
          T.Accepted,
          'False',
          Reason.Conflicted,
          `${loser.feature} for ${loser.target} is already set by the older ${policyId(winner.policy)}`,
          loser.policy.generation,
        ),
      );
    }
  }

  for (const [p, byRef] of statuses) {
    result.targets.set(
      `${p.kind}/${p.namespace}/${p.name}`,
      [...byRef].map(([ref, st]) => ({
        ref,
        namespace: p.namespace,
        condition: st.condition,
        ...(st.target ? { target: st.target } : {}),
        ...(st.extra ? { extra: st.extra } : {}),
      })),
    );
  }
  return result;
}

/**
 * Ancestor statuses (GEP-713): one per Gateway the policy's targets are reached through;
 * a target no attached route reaches is reported as its own ancestor.
 */
export function policyAncestors(
  targets: readonly PolicyTargetState[],
  reach: ReadonlyMap<string, ReadonlySet<string>>,
): PolicyAncestorStatus[] {
  const byAncestor = new Map<
    string,
    { ref: ParentReferenceStatus; condition: Condition; extra: readonly Condition[] }
  >();
  for (const t of targets) {
    const gateways = t.target !== undefined ? [...(reach.get(t.target) ?? [])].sort() : [];
    const refs: ParentReferenceStatus[] =
      gateways.length > 0
        ? gateways.map((g) => {
            const [namespace = '', name = ''] = g.split('/');
            return { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name };
          })
        : [
            {
              group: t.ref.group,
              kind: t.ref.kind,
              namespace: t.namespace,
              name: t.ref.name,
              ...(t.ref.sectionName !== undefined ? { sectionName: t.ref.sectionName } : {}),
            },
          ];
    for (const ref of refs) {
      const key = `${ref.group}/${ref.kind}/${ref.namespace}/${ref.name}/${ref.sectionName ?? ''}`;
      const seen = byAncestor.get(key);
      // With several targets under one ancestor, a False condition is the one to show.
      if (!seen || (seen.condition.status === 'True' && t.condition.status !== 'True')) {
        byAncestor.set(key, { ref, condition: t.condition, extra: t.extra ?? [] });
      }
    }
  }
  return [...byAncestor.values()].map(({ ref, condition: c, extra }) => ({
    ancestorRef: ref,
    controllerName: CONTROLLER_NAME,
    conditions: [c, ...extra],
  }));
}

/** The CA certificates a BackendTLSPolicy trusts from its caCertificateRefs, and what is wrong with the others. */
function backendTrust(
  p: BackendTLSPolicy,
  configMaps: ReadonlyMap<string, ConfigMap>,
): { caCertificates?: string; problems: string[]; kindProblem: boolean } {
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
    const cm = configMaps.get(`${p.namespace}/${ref.name}`);
    if (!cm) {
      problems.push(`${field}: ConfigMap ${p.namespace}/${ref.name} not found`);
      continue;
    }
    const ca = cm.data['ca.crt'];
    const path = ['data', 'ca.crt'];
    const where = `ConfigMap ${cm.namespace}/${cm.name} ${formatFieldPath(path)} (${cm.origin.source.file}:${cm.origin.lineOf(path)})`;
    if (!ca) {
      problems.push(`${field}: ConfigMap ${cm.namespace}/${cm.name} has no ca.crt`);
      continue;
    }
    const certs = parseCertificates(ca.value);
    if (typeof certs === 'string') {
      problems.push(`${field}: ${where} ${certs}`);
      continue;
    }
    pems.push(...certs.map((c) => c.toString()));
  }
  return { ...(pems.length > 0 ? { caCertificates: pems.join('') } : {}), problems, kindProblem };
}
