// Direct-attached policies (GEP-713): BackendTLSPolicy, XBackendTrafficPolicy and the
// seed's SessionPersistencePolicy. Resolves targets, settles conflicts (the oldest policy
// wins, then namespace/name), and reports one ancestor status per target.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Model, ModelObject, PolicyTargetRef, SessionSpec } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableRetryConstraint } from '../table/policy-table.js';
import { olderFirst } from './precedence.js';
import { CONTROLLER_NAME, type Condition, type PolicyAncestorStatus, condition } from './status.js';

export interface SessionSource {
  readonly spec: SessionSpec;
  /** `sessionpersistencepolicy/<ns>/<name>` or `xbackendtrafficpolicy/<ns>/<name>`. */
  readonly from: string;
}

export interface PolicyResult {
  readonly tlsHostnames: Map<string, string>;
  readonly retryConstraints: Map<string, TableRetryConstraint>;
  /** Session persistence by target: `service/<ns>/<name>`, `route/<kind>/<ns>/<name>`, `rule/<kind>/<ns>/<name>/<section>`. */
  readonly sessions: Map<string, SessionSource>;
  /** Ancestor statuses by policy `<kind>/<ns>/<name>`. */
  readonly ancestors: Map<string, PolicyAncestorStatus[]>;
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
    tlsHostnames: new Map(),
    retryConstraints: new Map(),
    sessions: new Map(),
    ancestors: new Map(),
  };
  const services = new Set(model.services.map((s) => `${s.namespace}/${s.name}`));
  const routes = new Map(model.routes.map((r) => [`${r.kind}/${r.namespace}/${r.name}`, r]));
  const claims: Claim[] = [];
  const statuses = new Map<ModelObject, Map<PolicyTargetRef, Condition>>();
  const setStatus = (p: ModelObject, ref: PolicyTargetRef, c: Condition) => {
    const m = statuses.get(p) ?? new Map<PolicyTargetRef, Condition>();
    m.set(ref, c);
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
      setStatus(p, ref, condition(T.Accepted, 'True', Reason.Accepted, 'accepted', p.generation));
      for (const [feature, apply] of features)
        claims.push({ policy: p, ref, target: t, feature, apply: () => apply(t) });
    }
  };

  for (const p of model.backendTlsPolicies) {
    claimAll(p, p.targetRefs, false, [
      ['tls', (t) => result.tlsHostnames.set(t.slice('service/'.length), p.hostname ?? '')],
    ]);
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
    const ancestors: PolicyAncestorStatus[] = [...byRef].map(([ref, c]) => ({
      ancestorRef: {
        group: ref.group,
        kind: ref.kind,
        namespace: p.namespace,
        name: ref.name,
        ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
      },
      controllerName: CONTROLLER_NAME,
      conditions: [c],
    }));
    result.ancestors.set(`${p.kind}/${p.namespace}/${p.name}`, ancestors);
  }
  return result;
}
