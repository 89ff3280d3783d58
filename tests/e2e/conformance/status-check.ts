// Compares what the control service reports for an object with a table's StatusExpectation,
// the way upstream's kubernetes helpers do (conditionsMatch, gatewayListenersMatch): named
// conditions present with their status (and reason, when one is named), listeners equal in
// number and matched by name. Returns what differs, empty when it matches.
import type { Condition, ObjectStatus } from '../../../extproc/src/translate/status.js';
import type { ConditionExpectation, ListenerExpectation, StatusExpectation } from './conformance-case.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';

function conditionProblems(
  where: string,
  expected: readonly ConditionExpectation[],
  actual: readonly Condition[],
): string[] {
  return expected.flatMap((e) => {
    const got = actual.find((c) => c.type === e.type);
    if (!got) return [`${where}: no ${e.type} condition`];
    if (got.status !== e.status || (e.reason !== undefined && got.reason !== e.reason)) {
      return [
        `${where}: ${e.type} is ${got.status}/${got.reason} (${got.message}), expected ${e.status}/${e.reason ?? 'any reason'}`,
      ];
    }
    return [];
  });
}

function listenerProblems(
  expected: readonly ListenerExpectation[],
  actual: NonNullable<ObjectStatus['status']['listeners']>,
): string[] {
  if (expected.length !== actual.length) {
    return [`${actual.length} listener(s) in status, expected ${expected.length}`];
  }
  return expected.flatMap((e) => {
    const got = actual.find((l) => l.name === e.name);
    const where = `listener ${e.name}`;
    if (!got) return [`${where}: not in status`];
    const problems: string[] = [];
    if (e.supportedKinds.length === 0 && got.supportedKinds.length > 0) {
      problems.push(
        `${where}: supportedKinds ${got.supportedKinds.map((k) => k.kind).join(', ')}, expected none`,
      );
    }
    for (const kind of e.supportedKinds) {
      if (!got.supportedKinds.some((k) => k.kind === kind && k.group === GATEWAY_GROUP)) {
        problems.push(`${where}: ${kind} is not among its supportedKinds`);
      }
    }
    if (got.attachedRoutes !== e.attachedRoutes) {
      problems.push(`${where}: attachedRoutes ${got.attachedRoutes}, expected ${e.attachedRoutes}`);
    }
    return [...problems, ...conditionProblems(where, e.conditions, got.conditions)];
  });
}

/** Conditions that did not observe `generation` (upstream's ConditionsHaveLatestObservedGeneration). */
function staleConditions(body: ObjectStatus['status'], generation: number): string[] {
  const all = [
    ...(body.conditions ?? []),
    ...(body.listeners ?? []).flatMap((l) => l.conditions),
    ...(body.parents ?? []).flatMap((p) => p.conditions),
    ...(body.ancestors ?? []).flatMap((a) => a.conditions),
  ];
  return all
    .filter((c) => c.observedGeneration !== generation)
    .map((c) => `${c.type}: observedGeneration ${c.observedGeneration ?? 'unset'}, expected ${generation}`);
}

/** What in `statuses` differs from `expected`. */
export function statusProblems(expected: StatusExpectation, statuses: readonly ObjectStatus[]): string[] {
  const namespace = expected.namespace ?? 'default';
  const object = statuses.find(
    (s) =>
      s.kind === expected.kind &&
      s.metadata.name === expected.name &&
      (s.metadata.namespace ?? '') === namespace,
  );
  if (!object) return [`no status for ${expected.kind} ${namespace}/${expected.name}`];
  const body = object.status;
  const problems = conditionProblems(expected.kind, expected.conditions ?? [], body.conditions ?? []);
  if (expected.listeners) problems.push(...listenerProblems(expected.listeners, body.listeners ?? []));
  if (expected.observedGeneration !== undefined)
    problems.push(...staleConditions(body, expected.observedGeneration));
  for (const [name, conditions] of Object.entries(expected.listenerConditions ?? {})) {
    const got = body.listeners?.find((l) => l.name === name);
    if (got) problems.push(...conditionProblems(`listener ${name}`, conditions, got.conditions));
    else problems.push(`listener ${name}: not in status`);
  }
  for (const p of expected.parents ?? []) {
    const where = `parent ${p.gateway}${p.sectionName ? `/${p.sectionName}` : ''}`;
    const got = (body.parents ?? []).find(
      (s) =>
        s.parentRef.name === p.gateway &&
        s.parentRef.namespace === (p.namespace ?? namespace) &&
        s.parentRef.sectionName === p.sectionName,
    );
    if (got) problems.push(...conditionProblems(where, p.conditions, got.conditions));
    else problems.push(`${where}: not among the route's parents`);
  }
  for (const a of expected.ancestors ?? []) {
    const where = `ancestor ${a.kind} ${a.name}`;
    const got = (body.ancestors ?? []).find(
      (s) =>
        s.ancestorRef.kind === a.kind &&
        s.ancestorRef.name === a.name &&
        s.ancestorRef.namespace === (a.namespace ?? namespace) &&
        s.ancestorRef.sectionName === a.sectionName,
    );
    if (got) problems.push(...conditionProblems(where, a.conditions, got.conditions));
    else problems.push(`${where}: not among the policy's ancestors`);
  }
  return problems;
}
