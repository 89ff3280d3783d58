// GatewayClasses and Gateways: which Gateways steadfast serves, and which listeners work.
import { CONTROLLER_NAME, ConditionType as T, Reason, type ReasonName } from '../gatewayapi/codes.js';
import type {
  Gateway,
  GatewayClass,
  Listener,
  Model,
  ReferenceGrant,
  RouteGroupKind,
  Secret,
} from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { CertificateMaterial } from '../policy/tls-material.js';
import { type CertificateProblem, resolveListenerCertificates } from './listener-tls.js';
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
  /** HTTPS: ids of the usable certificates (key pairs in TlsMaterial). */
  readonly certificates: readonly string[];
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

/** The article of a protocol read letter by letter: "an HTTP", "a TLS", "a UDP". */
function article(protocol: string): string {
  return /^[AEFHILMNORSX]/.test(protocol) ? 'an' : 'a';
}

/** The listener protocols steadfast serves. */
const SERVED = ['HTTP', 'HTTPS'];

interface CertificateContext {
  readonly secrets: ReadonlyMap<string, Secret>;
  readonly grants: readonly ReferenceGrant[];
  /** Filled with the key pairs of usable certificates. */
  readonly material: Record<string, CertificateMaterial>;
}

function evaluateListener(
  gw: Gateway,
  l: Listener,
  all: readonly Listener[],
  certs: CertificateContext,
): ListenerState {
  const gen = gw.generation;
  const id = `gateway/${gw.namespace}/${gw.name}/listener/${l.name}`;
  const conds: Condition[] = [];
  let usable = true;
  // The first served listener on a port sets its protocol; another protocol there conflicts.
  const owner = all.find((o) => o.port === l.port && SERVED.includes(o.protocol));
  const conflict = owner !== undefined && owner.protocol !== l.protocol;
  let certificates: readonly string[] = [];
  let certificateProblems: readonly CertificateProblem[] = [];
  const notAccepted = (reason: ReasonName, message: string) => {
    usable = false;
    conds.push(condition(T.Accepted, 'False', reason, message, gen));
  };
  if (!SERVED.includes(l.protocol)) {
    notAccepted(
      Reason.UnsupportedProtocol,
      `protocol ${l.protocol} is not supported: steadfast listeners speak HTTP (HTTP/1.1 and h2c) and HTTPS (TLS terminated, HTTP/1.1 and HTTP/2)`,
    );
  } else if (conflict) {
    notAccepted(
      Reason.ProtocolConflict,
      `port ${l.port} is already used by ${owner.protocol} listener ${owner.name}`,
    );
  } else if (l.protocol === 'HTTPS' && l.tls?.mode === 'Passthrough') {
    notAccepted(
      Reason.UnsupportedProtocol,
      'tls.mode Passthrough is not supported: steadfast terminates TLS (mode Terminate) so that it can route HTTP',
    );
  } else if (l.protocol === 'HTTPS' && l.frontendValidation) {
    notAccepted(
      Reason.UnsupportedProtocol,
      'tls.frontendValidation (client certificates) is not supported; the listener is not served rather than served without it',
    );
  } else {
    if (l.protocol === 'HTTPS') {
      const resolved = resolveListenerCertificates(gw, l, certs.secrets, certs.grants, certs.material);
      certificates = resolved.ids;
      certificateProblems = resolved.problems;
      // Without a single usable certificate there is nothing to serve TLS with.
      if (certificates.length === 0) usable = false;
    }
    conds.push(condition(T.Accepted, 'True', Reason.Accepted, 'listener accepted', gen));
  }
  conds.push(
    conflict
      ? condition(
          T.Conflicted,
          'True',
          Reason.ProtocolConflict,
          `${article(owner.protocol)} ${owner.protocol} listener already uses port ${l.port}`,
          gen,
        )
      : condition(T.Conflicted, 'False', Reason.NoConflicts, 'no conflicts', gen),
  );
  const firstProblem = certificateProblems[0];
  if (firstProblem) {
    // "If the reference is not allowed, the reason RefNotPermitted must be used instead."
    const reason = certificateProblems.some((p) => p.reason === 'RefNotPermitted')
      ? Reason.RefNotPermitted
      : Reason.InvalidCertificateRef;
    conds.push(
      condition(
        T.ResolvedRefs,
        'False',
        reason,
        certificateProblems.map((p) => p.message).join('; ') +
          (certificates.length === 0 ? '; no usable certificate: the listener is not served' : ''),
        gen,
      ),
    );
  }
  let supportedKinds: RouteGroupKind[] = usable ? [...HTTP_KINDS] : [];
  if (l.allowedKinds) {
    const bad = l.allowedKinds.filter(
      (k) => !HTTP_KINDS.some((h) => h.group === k.group && h.kind === k.kind),
    );
    supportedKinds = usable ? l.allowedKinds.filter((k) => !bad.includes(k)) : [];
    if (bad.length > 0 && !conds.some((c) => c.type === T.ResolvedRefs)) {
      conds.push(
        condition(
          T.ResolvedRefs,
          'False',
          Reason.InvalidRouteKinds,
          `route kinds ${bad.map((k) => `${k.group}/${k.kind}`).join(', ')} are not supported on ${article(l.protocol)} ${l.protocol} listener`,
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
  return {
    id,
    listener: l,
    gateway: gw,
    usable,
    supportedKinds,
    conditions: conds,
    attachedRoutes: 0,
    certificates,
  };
}

export function evaluateGateways(
  model: Model,
  material: Record<string, CertificateMaterial> = {},
): Map<string, GatewayState> {
  const certs: CertificateContext = {
    secrets: new Map(model.secrets.map((s) => [`${s.namespace}/${s.name}`, s])),
    grants: model.referenceGrants,
    material,
  };
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
    const listeners = gw.listeners.map((l) => evaluateListener(gw, l, gw.listeners, certs));
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
