// One model's policy evaluation: each targetRef resolved to its target (a Service or its
// port, a route or one of its rules), the features each policy claims there, conflicts settled
// (GEP-713: the oldest policy wins, then namespace/name), and each targetRef's conditions.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Model, ModelObject, PolicyTargetRef, Route } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import { olderFirst } from './precedence.js';
import { type Condition, condition } from './status.js';

export interface PolicyTargetState {
  readonly ref: PolicyTargetRef;
  readonly namespace: string;
  /** `service/<ns>/<name>[/<port name>]`, `route/<kind>/<ns>/<name>` or `rule/<kind>/<ns>/<name>/<rule>`. */
  readonly target?: string;
  readonly condition: Condition;
  /** Further conditions for every ancestor (BackendTLSPolicy's ResolvedRefs). */
  readonly extra?: readonly Condition[];
}

export type Feature = 'tls' | 'retryConstraint' | 'session';

interface Claim {
  readonly policy: ModelObject;
  readonly ref: PolicyTargetRef;
  readonly target: string;
  readonly feature: Feature;
  readonly apply: () => void;
}

interface RefStatus {
  readonly condition: Condition;
  readonly target?: string;
  readonly extra?: readonly Condition[];
}

export function policyId(p: ModelObject): string {
  return `${p.kind.toLowerCase()}/${p.namespace}/${p.name}`;
}

/** What the policies of one model claim, and each targetRef's conditions so far. */
export class PolicyEvaluation {
  private readonly claims: Claim[] = [];
  private readonly statuses = new Map<ModelObject, Map<PolicyTargetRef, RefStatus>>();
  private readonly services: ReadonlySet<string>;
  private readonly model: Model;
  /** The routes by `<kind>/<ns>/<name>`, made when a policy first names one: most models have no policy. */
  private routesByKey: ReadonlyMap<string, Route> | undefined;

  constructor(model: Model) {
    this.services = new Set(model.services.map((s) => `${s.namespace}/${s.name}`));
    this.model = model;
  }

  private routes(): ReadonlyMap<string, Route> {
    return (this.routesByKey ??= new Map(
      this.model.routes.map((r) => [`${r.kind}/${r.namespace}/${r.name}`, r]),
    ));
  }

  /** Sets a targetRef's condition, keeping its target and extra conditions unless given anew. */
  setStatus(
    p: ModelObject,
    ref: PolicyTargetRef,
    c: Condition,
    target?: string,
    extra?: readonly Condition[],
  ) {
    const m = this.statuses.get(p) ?? new Map<PolicyTargetRef, RefStatus>();
    const keep = target ?? m.get(ref)?.target;
    const keepExtra = extra ?? m.get(ref)?.extra;
    m.set(ref, {
      condition: c,
      ...(keep !== undefined ? { target: keep } : {}),
      ...(keepExtra !== undefined ? { extra: keepExtra } : {}),
    });
    this.statuses.set(p, m);
  }

  /** The targetRefs of `p` with their status so far. */
  refsOf(p: ModelObject): [PolicyTargetRef, RefStatus][] {
    return [...(this.statuses.get(p) ?? [])];
  }

  /** Resolves every targetRef of `p` and claims `features` on each target found. */
  claimAll(
    p: ModelObject,
    refs: readonly PolicyTargetRef[],
    allowRoutes: boolean,
    features: readonly [Feature, (t: string) => void][],
  ): void {
    for (const ref of refs) {
      if (p.errors.length > 0) {
        const message = `the policy has schema errors: ${p.errors[0]?.message ?? ''}`;
        this.setStatus(p, ref, condition(T.Accepted, 'False', Reason.Invalid, message, p.generation));
        continue;
      }
      const t = targetKey(p, ref, allowRoutes, this.services, this.routes());
      if (typeof t !== 'string') {
        this.setStatus(p, ref, t);
        continue;
      }
      this.setStatus(p, ref, condition(T.Accepted, 'True', Reason.Accepted, 'accepted', p.generation), t);
      for (const [feature, apply] of features)
        this.claims.push({ policy: p, ref, target: t, feature, apply: () => apply(t) });
    }
  }

  /** Conflicts: per target and feature, the oldest policy wins; the others are Conflicted. */
  settleConflicts(): void {
    const groups = new Map<string, Claim[]>();
    for (const c of this.claims) {
      const key = `${c.feature}|${c.target}`;
      groups.set(key, [...(groups.get(key) ?? []), c]);
    }
    for (const group of groups.values()) {
      const [winner, ...losers] = [...group].sort((a, b) => olderFirst(a.policy, b.policy));
      if (!winner) continue;
      winner.apply();
      for (const loser of losers) {
        const message = `${loser.feature} for ${loser.target} is already set by the older ${policyId(winner.policy)}`;
        const c = condition(T.Accepted, 'False', Reason.Conflicted, message, loser.policy.generation);
        this.setStatus(loser.policy, loser.ref, c);
      }
    }
  }

  /** Per policy `<kind>/<ns>/<name>`: each targetRef with its target and conditions. */
  targets(): Map<string, PolicyTargetState[]> {
    const out = new Map<string, PolicyTargetState[]>();
    for (const [p, byRef] of this.statuses) {
      out.set(
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
    return out;
  }
}

/** The target's key, or a reason the target cannot be used. */
function targetKey(
  p: ModelObject,
  ref: PolicyTargetRef,
  allowRoutes: boolean,
  services: ReadonlySet<string>,
  routes: ReadonlyMap<string, Route>,
): string | Condition {
  const notFound = (message: string) =>
    condition(T.Accepted, 'False', Reason.TargetNotFound, message, p.generation);
  if (ref.group === '' && ref.kind === 'Service') {
    const key = `${p.namespace}/${ref.name}`;
    if (!services.has(key)) return notFound(`Service ${key} not found`);
    return ref.sectionName !== undefined ? `service/${key}/${ref.sectionName}` : `service/${key}`;
  }
  const routeKind = ref.kind === 'HTTPRoute' || ref.kind === 'GRPCRoute';
  if (allowRoutes && ref.group === GATEWAY_GROUP && routeKind) {
    const name = `${ref.kind} ${p.namespace}/${ref.name}`;
    const route = routes.get(`${ref.kind}/${p.namespace}/${ref.name}`);
    if (!route) return notFound(`${name} not found`);
    if (ref.sectionName === undefined) return `route/${ref.kind}/${p.namespace}/${ref.name}`;
    if (!route.rules.some((r) => r.name === ref.sectionName))
      return notFound(`${name} has no rule named ${ref.sectionName}`);
    return `rule/${ref.kind}/${p.namespace}/${ref.name}/${ref.sectionName}`;
  }
  const allowed = allowRoutes ? 'Service, HTTPRoute or GRPCRoute' : 'core Service';
  const message = `targetRef ${ref.group || 'core'}/${ref.kind} is not supported; use ${allowed}`;
  return condition(T.Accepted, 'False', Reason.Invalid, message, p.generation);
}
