// GatewayClasses and Gateways: which Gateways steadfast serves, and which listeners work.
import { CONTROLLER_NAME, ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Gateway, GatewayClass, Listener, Model, RouteGroupKind } from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import { type Condition, type ListenerStatus, type ObjectStatusBody, condition } from './status.js';

/** Route kinds an HTTP listener accepts by default and at all. */
const HTTP_KINDS: readonly RouteGroupKind[] = [
  { group: GATEWAY_GROUP, kind: 'HTTPRoute' },
  { group: GATEWAY_GROUP, kind: 'GRPCRoute' },
];

export interface ListenerState {
  readonly id: string;
  readonly listener: Listener;
  readonly gateway: Gateway;
  readonly usable: boolean;
  readonly supportedKinds: readonly RouteGroupKind[];
  readonly conditions: Condition[];
  attachedRoutes: number;
}

export interface GatewayState {
  readonly gateway: Gateway;
  /** Why steadfast leaves this Gateway alone (another controller's class); undefined when served. */
  readonly foreign?: string;
  readonly accepted: boolean;
  readonly listeners: readonly ListenerState[];
  readonly conditions: readonly Condition[];
}

export function gatewayKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function classStatus(gc: GatewayClass): ObjectStatusBody {
  const gen = gc.generation;
  if (gc.errors.length > 0) {
    return {
      conditions: [
        condition(T.Accepted, 'False', Reason.InvalidParameters, 'the GatewayClass has schema errors', gen),
      ],
    };
  }
  if (gc.controllerName !== CONTROLLER_NAME) {
    return {
      conditions: [
        condition(
          T.Accepted,
          'Unknown',
          Reason.Pending,
          `controllerName is ${gc.controllerName ?? '(unset)'}, not ${CONTROLLER_NAME}: steadfast leaves this class and its Gateways alone`,
          gen,
        ),
      ],
    };
  }
  return {
    conditions: [condition(T.Accepted, 'True', Reason.Accepted, `accepted by ${CONTROLLER_NAME}`, gen)],
  };
}

function evaluateListener(gw: Gateway, l: Listener, all: readonly Listener[]): ListenerState {
  const gen = gw.generation;
  const id = `gateway/${gw.namespace}/${gw.name}/listener/${l.name}`;
  const conds: Condition[] = [];
  let usable = true;
  // Only HTTP listeners are ever programmed, so another protocol on their port is what conflicts.
  const conflict =
    l.protocol !== 'HTTP' && all.some((o) => o !== l && o.port === l.port && o.protocol === 'HTTP');
  if (l.protocol !== 'HTTP') {
    usable = false;
    conds.push(
      condition(
        T.Accepted,
        'False',
        Reason.UnsupportedProtocol,
        `protocol ${l.protocol} is not supported: steadfast listeners speak HTTP (HTTP/1.1 and h2c)`,
        gen,
      ),
    );
  } else {
    conds.push(condition(T.Accepted, 'True', Reason.Accepted, 'listener accepted', gen));
  }
  conds.push(
    conflict
      ? condition(
          T.Conflicted,
          'True',
          Reason.ProtocolConflict,
          `an HTTP listener already uses port ${l.port}`,
          gen,
        )
      : condition(T.Conflicted, 'False', Reason.NoConflicts, 'no conflicts', gen),
  );
  let supportedKinds: RouteGroupKind[] = usable ? [...HTTP_KINDS] : [];
  if (l.allowedKinds) {
    const bad = l.allowedKinds.filter(
      (k) => !HTTP_KINDS.some((h) => h.group === k.group && h.kind === k.kind),
    );
    supportedKinds = usable ? l.allowedKinds.filter((k) => !bad.includes(k)) : [];
    if (bad.length > 0) {
      conds.push(
        condition(
          T.ResolvedRefs,
          'False',
          Reason.InvalidRouteKinds,
          `route kinds ${bad.map((k) => `${k.group}/${k.kind}`).join(', ')} are not supported on an HTTP listener`,
          gen,
        ),
      );
    }
  }
  if (!conds.some((c) => c.type === T.ResolvedRefs))
    conds.push(condition(T.ResolvedRefs, 'True', Reason.ResolvedRefs, 'all references resolved', gen));
  conds.push(
    usable
      ? condition(T.Programmed, 'True', Reason.Programmed, 'listener programmed', gen)
      : condition(T.Programmed, 'False', Reason.Invalid, 'listener is not usable', gen),
  );
  return { id, listener: l, gateway: gw, usable, supportedKinds, conditions: conds, attachedRoutes: 0 };
}

export function evaluateGateways(model: Model): Map<string, GatewayState> {
  const classes = new Map(model.gatewayClasses.map((c) => [c.name, c]));
  const out = new Map<string, GatewayState>();
  for (const gw of model.gateways) {
    const gen = gw.generation;
    const gc = classes.get(gw.gatewayClassName);
    // File mode: a Gateway is served even when its GatewayClass is absent.
    if (gc && gc.controllerName !== CONTROLLER_NAME) {
      const foreign = `GatewayClass ${gc.name} belongs to controller ${gc.controllerName ?? '(unset)'}; steadfast leaves this Gateway alone`;
      out.set(gatewayKey(gw.namespace, gw.name), {
        gateway: gw,
        foreign,
        accepted: false,
        listeners: [],
        conditions: [condition(T.Accepted, 'Unknown', Reason.Pending, foreign, gen)],
      });
      continue;
    }
    if (gw.errors.length > 0) {
      out.set(gatewayKey(gw.namespace, gw.name), {
        gateway: gw,
        accepted: false,
        listeners: [],
        conditions: [
          condition(T.Accepted, 'False', Reason.Invalid, 'the Gateway has schema errors', gen),
          condition(T.Programmed, 'False', Reason.Invalid, 'the Gateway has schema errors', gen),
        ],
      });
      continue;
    }
    const listeners = gw.listeners.map((l) => evaluateListener(gw, l, gw.listeners));
    const usable = listeners.filter((l) => l.usable).length;
    const conditions: Condition[] = [];
    if (usable === 0) {
      conditions.push(condition(T.Accepted, 'False', Reason.ListenersNotValid, 'no listener is usable', gen));
      conditions.push(condition(T.Programmed, 'False', Reason.Invalid, 'no listener is usable', gen));
    } else {
      conditions.push(
        usable < listeners.length
          ? condition(
              T.Accepted,
              'True',
              Reason.ListenersNotValid,
              `${listeners.length - usable} listener(s) are not usable`,
              gen,
            )
          : condition(T.Accepted, 'True', Reason.Accepted, 'accepted', gen),
      );
      conditions.push(condition(T.Programmed, 'True', Reason.Programmed, 'programmed', gen));
    }
    out.set(gatewayKey(gw.namespace, gw.name), { gateway: gw, accepted: usable > 0, listeners, conditions });
  }
  return out;
}

export function gatewayStatus(state: GatewayState): ObjectStatusBody {
  const listeners: ListenerStatus[] = state.listeners.map((l) => ({
    name: l.listener.name,
    supportedKinds: l.supportedKinds,
    attachedRoutes: l.attachedRoutes,
    conditions: l.conditions,
  }));
  return { conditions: state.conditions, ...(state.foreign ? {} : { listeners }) };
}
