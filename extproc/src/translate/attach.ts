// Route → Gateway attachment: parentRefs, sectionName/port, allowedRoutes (namespaces and
// kinds) and hostname intersection, with the upstream Accepted reasons.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { LabelSelector, Namespace, ParentRef, Route } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import { type GatewayState, type ListenerState, gatewayKey } from './gateways.js';
import { intersectHostnames } from './hostnames.js';
import { type Condition, condition } from './status.js';

export interface Attachment {
  readonly parentRef: ParentRef;
  readonly gateway?: GatewayState;
  readonly accepted: Condition;
  /** Listeners the route attached to, with the hostnames it serves on each. */
  readonly listeners: readonly { readonly state: ListenerState; readonly hostnames: readonly string[] }[];
}

function selectorMatches(sel: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels)) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions) {
    const has = Object.hasOwn(labels, e.key);
    const v = labels[e.key];
    if (e.operator === 'In' && !(has && e.values.includes(v ?? ''))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(v ?? '')) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function namespaceAllowed(
  l: ListenerState,
  routeNs: string,
  namespaces: ReadonlyMap<string, Namespace>,
): boolean {
  const allowed = l.listener.allowedNamespaces;
  if (allowed.from === 'All') return true;
  if (allowed.from === 'Same') return routeNs === l.gateway.namespace;
  if (!allowed.selector) return false;
  // The API server labels every namespace with its own name.
  const labels = { ...(namespaces.get(routeNs)?.labels ?? {}), 'kubernetes.io/metadata.name': routeNs };
  return selectorMatches(allowed.selector, labels);
}

type RejectReason =
  | typeof Reason.NoMatchingParent
  | typeof Reason.NotAllowedByListeners
  | typeof Reason.NoMatchingListenerHostname;

/** Why a parentRef does not attach, and to which Gateway when it names one. */
interface Rejection {
  readonly rejected: true;
  readonly reason: RejectReason;
  readonly message: string;
  readonly gateway?: GatewayState;
}

type AttachedListeners = Attachment['listeners'];

/**
 * The listeners of an accepted Gateway that the parentRef names (sectionName, port), that
 * take the route (kind, namespace) and share a hostname with it; or why there are none.
 */
function attachedListeners(
  route: Route,
  parentRef: ParentRef,
  gw: GatewayState,
  namespaces: ReadonlyMap<string, Namespace>,
): AttachedListeners | Rejection {
  const gateway = `Gateway ${parentRef.namespace}/${parentRef.name}`;
  const named = gw.listeners.filter(
    (l) =>
      (parentRef.sectionName === undefined || l.listener.name === parentRef.sectionName) &&
      (parentRef.port === undefined || l.listener.port === parentRef.port),
  );
  if (named.length === 0) {
    const which = [
      parentRef.sectionName !== undefined ? `sectionName ${parentRef.sectionName}` : '',
      parentRef.port !== undefined ? `port ${parentRef.port}` : '',
    ].filter(Boolean);
    return {
      rejected: true,
      reason: Reason.NoMatchingParent,
      message: `${gateway} has no listener with ${which.join(' and ')}`,
      gateway: gw,
    };
  }
  const takesKind = (l: ListenerState): boolean =>
    l.accepted && l.supportedKinds.some((k) => k.group === GATEWAY_GROUP && k.kind === route.kind);
  const allowed = named.filter((l) => takesKind(l) && namespaceAllowed(l, route.namespace, namespaces));
  if (allowed.length === 0) {
    const why = named.some(takesKind)
      ? `${route.kind} from namespace ${route.namespace}`
      : `the kind ${route.kind}`;
    return {
      rejected: true,
      reason: Reason.NotAllowedByListeners,
      message: `no valid listener of ${gateway} allows ${why}`,
      gateway: gw,
    };
  }
  const listeners = allowed
    .map((state) => ({ state, hostnames: intersectHostnames(state.listener.hostname, route.hostnames) }))
    .filter((l) => l.hostnames.length > 0);
  if (listeners.length > 0) return listeners;
  return {
    rejected: true,
    reason: Reason.NoMatchingListenerHostname,
    message: `no hostname of the route intersects a listener hostname of ${gateway}`,
    gateway: gw,
  };
}

/** The Gateway a parentRef names, when it is one that routes may attach to; or why not. */
function parentGateway(
  parentRef: ParentRef,
  gateways: ReadonlyMap<string, GatewayState>,
): GatewayState | Rejection {
  if (parentRef.group !== GATEWAY_GROUP || parentRef.kind !== 'Gateway') {
    return {
      rejected: true,
      reason: Reason.NoMatchingParent,
      message: `parent ${parentRef.group}/${parentRef.kind} is not supported; only Gateway`,
    };
  }
  const gw = gateways.get(gatewayKey(parentRef.namespace, parentRef.name));
  if (!gw) {
    return {
      rejected: true,
      reason: Reason.NoMatchingParent,
      message: `Gateway ${parentRef.namespace}/${parentRef.name} not found`,
    };
  }
  return gw;
}

function isRejection(x: object): x is Rejection {
  return 'rejected' in x;
}

export function attachRoute(
  route: Route,
  gateways: ReadonlyMap<string, GatewayState>,
  namespaces: ReadonlyMap<string, Namespace>,
): Attachment[] {
  const gen = route.generation;
  return route.parentRefs.map((parentRef): Attachment => {
    const reject = (r: Rejection): Attachment => ({
      parentRef,
      ...(r.gateway ? { gateway: r.gateway } : {}),
      accepted: condition(T.Accepted, 'False', r.reason, r.message, gen),
      listeners: [],
    });
    const gw = parentGateway(parentRef, gateways);
    if (isRejection(gw)) return reject(gw);
    if (gw.foreign) {
      return {
        parentRef,
        gateway: gw,
        accepted: condition(T.Accepted, 'Unknown', Reason.Pending, gw.foreign, gen),
        listeners: [],
      };
    }
    if (!gw.accepted) {
      return reject({
        rejected: true,
        reason: Reason.NoMatchingParent,
        message: `Gateway ${parentRef.namespace}/${parentRef.name} is not accepted`,
        gateway: gw,
      });
    }
    const listeners = attachedListeners(route, parentRef, gw, namespaces);
    if (isRejection(listeners)) return reject(listeners);
    return {
      parentRef,
      gateway: gw,
      accepted: condition(T.Accepted, 'True', Reason.Accepted, 'accepted', gen),
      listeners,
    };
  });
}
