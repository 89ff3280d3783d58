// Direct-attached policies (GEP-713): BackendTLSPolicy, XBackendTrafficPolicy and the
// seed's SessionPersistencePolicy. Resolves targets, settles conflicts (the oldest policy
// wins, then namespace/name), and reports one ancestor status per target.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Model, ModelObject, PolicyTargetRef, SessionSpec } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableRetryConstraint } from '../table/policy-table.js';
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

export interface PolicyResult {
  readonly tlsHostnames: Map<string, string>;
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
    targets: new Map(),
  };
  const services = new Set(model.services.map((s) => `${s.namespace}/${s.name}`));
  const routes = new Map(model.routes.map((r) => [`${r.kind}/${r.namespace}/${r.name}`, r]));
  const claims: Claim[] = [];
  const statuses = new Map<ModelObject, Map<PolicyTargetRef, { condition: Condition; target?: string }>>();
  const setStatus = (p: ModelObject, ref: PolicyTargetRef, c: Condition, target?: string) => {
    const m = statuses.get(p) ?? new Map<PolicyTargetRef, { condition: Condition; target?: string }>();
    const keep = target ?? m.get(ref)?.target;
    m.set(ref, { condition: c, ...(keep !== undefined ? { target: keep } : {}) });
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
    result.targets.set(
      `${p.kind}/${p.namespace}/${p.name}`,
      [...byRef].map(([ref, st]) => ({
        ref,
        namespace: p.namespace,
        condition: st.condition,
        ...(st.target ? { target: st.target } : {}),
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
  const byAncestor = new Map<string, { ref: ParentReferenceStatus; condition: Condition }>();
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
        byAncestor.set(key, { ref, condition: t.condition });
      }
    }
  }
  return [...byAncestor.values()].map(({ ref, condition: c }) => ({
    ancestorRef: ref,
    controllerName: CONTROLLER_NAME,
    conditions: [c],
  }));
}
