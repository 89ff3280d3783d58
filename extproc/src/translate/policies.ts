// Direct-attached policies (GEP-713): BackendTLSPolicy (backend-tls-policies.ts),
// XBackendTrafficPolicy and the seed's SessionPersistencePolicy. Resolves targets, settles
// conflicts (the oldest policy wins, then namespace/name), and reports one ancestor status
// per target.
import type { Model, SessionSpec } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableRetryConstraint } from '../policy/policy-table.js';
import { type BackendTlsClaim, claimBackendTls } from './backend-tls-policies.js';
import { type Feature, PolicyEvaluation, type PolicyTargetState, policyId } from './policy-evaluation.js';
import {
  CONTROLLER_NAME,
  type Condition,
  type ParentReferenceStatus,
  type PolicyAncestorStatus,
} from './status.js';

export interface SessionSource {
  readonly spec: SessionSpec;
  /** `sessionpersistencepolicy/<ns>/<name>` or `xbackendtrafficpolicy/<ns>/<name>`. */
  readonly from: string;
}

export interface PolicyResult {
  /** By `<ns>/<service>` or `<ns>/<service>/<port name>`. */
  readonly backendTls: Map<string, BackendTlsClaim>;
  readonly retryConstraints: Map<string, TableRetryConstraint>;
  /** Session persistence by target: `service/<ns>/<name>`, `route/<kind>/<ns>/<name>`, `rule/<kind>/<ns>/<name>/<section>`. */
  readonly sessions: Map<string, SessionSource>;
  /** Per policy `<kind>/<ns>/<name>`: each targetRef, its target key when found, and its condition. */
  readonly targets: Map<string, PolicyTargetState[]>;
}

export function evaluatePolicies(model: Model): PolicyResult {
  const result: PolicyResult = {
    backendTls: new Map(),
    retryConstraints: new Map(),
    sessions: new Map(),
    targets: new Map(),
  };
  const ev = new PolicyEvaluation(model);
  claimBackendTls(model, ev, result.backendTls);
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
    ev.claimAll(p, p.targetRefs, false, features);
  }
  for (const p of model.sessionPolicies) {
    const session = p.session;
    ev.claimAll(
      p,
      p.targetRefs,
      true,
      session ? [['session', (t) => result.sessions.set(t, { spec: session, from: policyId(p) })]] : [],
    );
  }
  ev.settleConflicts();
  return { ...result, targets: ev.targets() };
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
