// Status as a controller writes it: conditions with the upstream types and reasons, per
// object, plus the located errors that made a condition False.
import { CONTROLLER_NAME, type ReasonName } from '../gatewayapi/codes.js';
import type { ParentRef } from '../gatewayapi/model.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: ReasonName;
  readonly message: string;
  readonly observedGeneration?: number;
}

/** A route's parentRef as its status names it: the reference, without its place in the list. */
export type ParentReferenceStatus = Omit<ParentRef, 'index'>;

export interface RouteParentStatus {
  readonly parentRef: ParentReferenceStatus;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface ListenerStatus {
  readonly name: string;
  readonly supportedKinds: readonly { group: string; kind: string }[];
  readonly attachedRoutes: number;
  readonly conditions: readonly Condition[];
}

export interface PolicyAncestorStatus {
  readonly ancestorRef: ParentReferenceStatus;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface ObjectStatusBody {
  readonly conditions?: readonly Condition[];
  readonly listeners?: readonly ListenerStatus[];
  readonly parents?: readonly RouteParentStatus[];
  readonly ancestors?: readonly PolicyAncestorStatus[];
}

export interface ObjectStatus {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly namespace?: string; readonly name: string };
  /** Where the object was read, when its provider knows (an attribute, not its identity). */
  readonly source?: { readonly file: string; readonly line: number };
  readonly errors: readonly {
    readonly field: string;
    readonly line: number;
    readonly code: string;
    readonly message: string;
  }[];
  /** Not wrong, but worth knowing: the object still works as written (e.g. a Service with no ready endpoints). */
  readonly warnings?: readonly ObjectWarning[];
  readonly status: ObjectStatusBody;
}

export interface ObjectWarning {
  readonly field: string;
  readonly line: number;
  readonly code: 'no-ready-endpoints' | 'underscore-session-header';
  readonly message: string;
}

/**
 * The conditions made so far, by content. Most objects say the same (every accepted route's
 * Accepted and ResolvedRefs) and translation keeps each route's: 40,000 equal objects at
 * 10,000 routes, 2.4 MiB of the compiler thread's heap, become a few. Let go when it holds
 * many (messages that name an object differ from object to object).
 */
const made = new Map<string, Condition>();
const MADE_AT_MOST = 4096;

/** A condition: frozen, as one object stands for every equal one. */
export function condition(
  type: string,
  status: ConditionStatus,
  reason: ReasonName,
  message: string,
  observedGeneration?: number,
): Condition {
  const key = `${type}\0${status}\0${reason}\0${observedGeneration ?? ''}\0${message}`;
  const known = made.get(key);
  if (known) return known;
  if (made.size >= MADE_AT_MOST) made.clear();
  const c: Condition = Object.freeze({
    type,
    status,
    reason,
    message,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  });
  made.set(key, c);
  return c;
}

export { CONTROLLER_NAME };

/** An object's identity in status: `kind/namespace/name` (namespace empty for cluster-scoped kinds). */
export function objectKey(o: Pick<ObjectStatus, 'kind' | 'metadata'>): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Statuses by object key; input order is kept. */
export function statusByObject(statuses: readonly ObjectStatus[]): ReadonlyMap<string, ObjectStatus> {
  return new Map(statuses.map((s) => [objectKey(s), s]));
}

/** Conditions that must be True for `steadfast validate` to pass. */
const MUST_BE_TRUE = new Set(['Accepted', 'Programmed', 'ResolvedRefs']);
/** Conditions that must not be True: part of the object is not served as written. */
const MUST_NOT_BE_TRUE = new Set(['PartiallyInvalid']);

function conditionsOf(s: ObjectStatusBody): Condition[] {
  return [
    ...(s.conditions ?? []),
    ...(s.listeners ?? []).flatMap((l) => l.conditions),
    ...(s.parents ?? []).flatMap((p) => p.conditions),
    ...(s.ancestors ?? []).flatMap((a) => a.conditions),
  ];
}

/** True when the object has no errors, nothing it reports is False, and nothing of it was dropped. */
export function isHealthy(o: ObjectStatus): boolean {
  if (o.errors.length > 0) return false;
  return conditionsOf(o.status).every(
    (c) =>
      !(MUST_BE_TRUE.has(c.type) && c.status === 'False') &&
      !(MUST_NOT_BE_TRUE.has(c.type) && c.status === 'True'),
  );
}

/**
 * An object and its status as users read them — `steadfast validate --output json` and
 * the admin API's `/v1/status` give the same shape.
 */
export function objectStatusView(s: ObjectStatus) {
  return {
    apiVersion: s.apiVersion,
    kind: s.kind,
    metadata: s.metadata,
    ...(s.source ? { source: s.source } : {}),
    errors: s.errors.map((e) => ({ field: e.field, message: e.message, line: e.line, code: e.code })),
    warnings: (s.warnings ?? []).map((w) => ({
      field: w.field,
      message: w.message,
      line: w.line,
      code: w.code,
    })),
    status: s.status,
  };
}
