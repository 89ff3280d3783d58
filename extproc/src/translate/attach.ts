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

export function attachRoute(
  route: Route,
  gateways: ReadonlyMap<string, GatewayState>,
  namespaces: ReadonlyMap<string, Namespace>,
): Attachment[] {
  const gen = route.generation;
  return route.parentRefs.map((parentRef): Attachment => {
    const reject = (
      reason:
        | typeof Reason.NoMatchingParent
        | typeof Reason.NotAllowedByListeners
        | typeof Reason.NoMatchingListenerHostname,
      message: string,
      gateway?: GatewayState,
    ): Attachment => ({
      parentRef,
      ...(gateway ? { gateway } : {}),
      accepted: condition(T.Accepted, 'False', reason, message, gen),
      listeners: [],
    });
    if (parentRef.group !== GATEWAY_GROUP || parentRef.kind !== 'Gateway') {
      return reject(
        Reason.NoMatchingParent,
        `parent ${parentRef.group}/${parentRef.kind} is not supported; only Gateway`,
      );
    }
    const gw = gateways.get(gatewayKey(parentRef.namespace, parentRef.name));
    if (!gw)
      return reject(Reason.NoMatchingParent, `Gateway ${parentRef.namespace}/${parentRef.name} not found`);
    if (gw.foreign) {
      return {
        parentRef,
        gateway: gw,
        accepted: condition(T.Accepted, 'Unknown', Reason.Pending, gw.foreign, gen),
        listeners: [],
      };
    }
    if (!gw.accepted)
      return reject(
        Reason.NoMatchingParent,
        `Gateway ${parentRef.namespace}/${parentRef.name} is not accepted`,
        gw,
      );
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
      return reject(
        Reason.NoMatchingParent,
        `Gateway ${parentRef.namespace}/${parentRef.name} has no listener with ${which.join(' and ')}`,
        gw,
      );
    }
    const allowed = named.filter(
      (l) =>
        l.accepted &&
        l.supportedKinds.some((k) => k.group === GATEWAY_GROUP && k.kind === route.kind) &&
        namespaceAllowed(l, route.namespace, namespaces),
    );
    if (allowed.length === 0) {
      const kindOk = named.some(
        (l) => l.accepted && l.supportedKinds.some((k) => k.group === GATEWAY_GROUP && k.kind === route.kind),
      );
      const why = kindOk ? `${route.kind} from namespace ${route.namespace}` : `the kind ${route.kind}`;
      return reject(
        Reason.NotAllowedByListeners,
        `no valid listener of Gateway ${parentRef.namespace}/${parentRef.name} allows ${why}`,
        gw,
      );
    }
    const listeners = allowed
      .map((state) => ({ state, hostnames: intersectHostnames(state.listener.hostname, route.hostnames) }))
      .filter((l) => l.hostnames.length > 0);
    if (listeners.length === 0) {
      return reject(
        Reason.NoMatchingListenerHostname,
        `no hostname of the route intersects a listener hostname of Gateway ${parentRef.namespace}/${parentRef.name}`,
        gw,
      );
    }
    return {
      parentRef,
      gateway: gw,
      accepted: condition(T.Accepted, 'True', Reason.Accepted, 'accepted', gen),
      listeners,
    };
  });
}
