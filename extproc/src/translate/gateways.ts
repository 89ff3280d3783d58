// GatewayClasses and Gateways: which Gateways steadfast serves, and which listeners work.
import { CONTROLLER_NAME, ConditionType as T, Reason, type ReasonName } from '../gatewayapi/codes.js';
import type {
  ConfigMap,
  Gateway,
  GatewayClass,
  Listener,
  Model,
  ReferenceGrant,
  RouteGroupKind,
  Secret,
} from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { TableClientValidation } from '../policy/policy-table.js';
import type { CertificateMaterial } from '../policy/tls-material.js';
import { backendClientCertificate } from './backend-client-certificate.js';
import {
  type FrontendCheck,
  checkFrontendValidation,
  insecureCondition,
  insecureFallback,
} from './frontend-validation.js';
import { type ListenerCertificates, resolveListenerCertificates } from './listener-tls.js';
import { sortedOlderFirst } from './precedence.js';
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
  /** Its configuration is valid (Accepted=True): routes attach to it and count in attachedRoutes. */
  readonly accepted: boolean;
  /** Accepted and it has what it needs to serve (Programmed=True): it goes to the table. */
  readonly usable: boolean;
  readonly supportedKinds: readonly RouteGroupKind[];
  readonly conditions: Condition[];
  attachedRoutes: number;
  /** HTTPS: ids of the usable certificates (key pairs in TlsMaterial). */
  readonly certificates: readonly string[];
  /** HTTPS: the client certificates the Gateway's spec.tls.frontend asks for here. */
  readonly clientValidation?: TableClientValidation;
}

export interface GatewayState {
  readonly gateway: Gateway;
  /** Why steadfast leaves this Gateway alone (another controller's class); undefined when served. */
  readonly foreign?: string;
  readonly accepted: boolean;
  readonly listeners: readonly ListenerState[];
  readonly conditions: readonly Condition[];
  /** spec.tls.backend: the id of the client certificate presented to TLS backends, when usable. */
  readonly backendClientCertificate?: string;
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
  readonly configMaps: ReadonlyMap<string, ConfigMap>;
  readonly grants: readonly ReferenceGrant[];
  /** Filled with the key pairs of usable certificates. */
  readonly material: Record<string, CertificateMaterial>;
}

/** Why a listener's configuration cannot be accepted at all, or undefined when it can. */
function refusal(l: Listener, all: readonly Listener[]): { reason: ReasonName; message: string } | undefined {
  if (!SERVED.includes(l.protocol)) {
    return {
      reason: Reason.UnsupportedProtocol,
      message: `protocol ${l.protocol} is not supported: steadfast listeners speak HTTP (HTTP/1.1 and h2c) and HTTPS (TLS terminated, HTTP/1.1 and HTTP/2)`,
    };
  }
  const owner = portOwner(l, all);
  if (owner && owner.protocol !== l.protocol) {
    return {
      reason: Reason.ProtocolConflict,
      message: `port ${l.port} is already used by ${owner.protocol} listener ${owner.name}`,
    };
  }
  if (l.protocol === 'HTTPS' && l.tls?.mode === 'Passthrough') {
    return {
      reason: Reason.UnsupportedProtocol,
      message:
        'tls.mode Passthrough is not supported: steadfast terminates TLS (mode Terminate) so that it can route HTTP',
    };
  }
  if (l.protocol === 'HTTPS' && l.frontendValidation) {
    return {
      reason: Reason.UnsupportedProtocol,
      message:
        'tls.frontendValidation (client certificates) is not supported; the listener is not served rather than served without it',
    };
  }
  return undefined;
}

/** The first served listener on a port sets its protocol; another protocol there conflicts. */
function portOwner(l: Listener, all: readonly Listener[]): Listener | undefined {
  return all.find((o) => o.port === l.port && SERVED.includes(o.protocol));
}

function conflictedCondition(l: Listener, all: readonly Listener[], gen: number | undefined): Condition {
  const owner = portOwner(l, all);
  return owner && owner.protocol !== l.protocol
    ? condition(
        T.Conflicted,
        'True',
        Reason.ProtocolConflict,
        `${article(owner.protocol)} ${owner.protocol} listener already uses port ${l.port}`,
        gen,
      )
    : condition(T.Conflicted, 'False', Reason.NoConflicts, 'no conflicts', gen);
}

/** The route kinds the listener supports (those it allows that steadfast serves), and the ones it allows that steadfast does not. */
function listenerKinds(l: Listener): { supported: RouteGroupKind[]; unsupported: RouteGroupKind[] } {
  if (!l.allowedKinds) return { supported: [...HTTP_KINDS], unsupported: [] };
  const known = (k: RouteGroupKind) => HTTP_KINDS.some((h) => h.group === k.group && h.kind === k.kind);
  return {
    supported: l.allowedKinds.filter(known),
    unsupported: l.allowedKinds.filter((k) => !known(k)),
  };
}

/** ResolvedRefs: certificate problems first (a refusal by a grant named as such), then client CAs, then route kinds. */
function resolvedRefsCondition(
  l: Listener,
  certificates: ListenerCertificates,
  frontend: FrontendCheck | undefined,
  unsupportedKinds: readonly RouteGroupKind[],
  gen: number | undefined,
): Condition {
  const problems = certificates.problems;
  if (problems.length > 0) {
    // "If the reference is not allowed, the reason RefNotPermitted must be used instead."
    const reason = problems.some((p) => p.reason === 'RefNotPermitted')
      ? Reason.RefNotPermitted
      : Reason.InvalidCertificateRef;
    const none = certificates.ids.length === 0 ? '; no usable certificate: the listener is not served' : '';
    return condition(T.ResolvedRefs, 'False', reason, problems.map((p) => p.message).join('; ') + none, gen);
  }
  const caProblem = frontend?.problems[0];
  if (caProblem) {
    const message = frontend?.problems.map((p) => p.message).join('; ') ?? '';
    return condition(T.ResolvedRefs, 'False', caProblem.reason, message, gen);
  }
  if (unsupportedKinds.length > 0) {
    return condition(
      T.ResolvedRefs,
      'False',
      Reason.InvalidRouteKinds,
      `route kinds ${unsupportedKinds.map((k) => `${k.group}/${k.kind}`).join(', ')} are not supported on ${article(l.protocol)} ${l.protocol} listener`,
      gen,
    );
  }
  return condition(T.ResolvedRefs, 'True', Reason.ResolvedRefs, 'all references resolved', gen);
}

const NO_CERTIFICATES: ListenerCertificates = { ids: [], problems: [] };

/**
 * One listener's state and conditions. A listener refused outright (protocol, conflict, TLS
 * mode) supports no kinds and takes no routes; an accepted one whose certificates all fail
 * still reports its kinds and counts the routes that attach, but is not programmed (served).
 */
function evaluateListener(
  gw: Gateway,
  l: Listener,
  all: readonly Listener[],
  certs: CertificateContext,
): ListenerState {
  const gen = gw.generation;
  const refused = refusal(l, all);
  const https = refused === undefined && l.protocol === 'HTTPS';
  const certificates = https
    ? resolveListenerCertificates(gw, l, certs.secrets, certs.grants, certs.material)
    : NO_CERTIFICATES;
  const frontend = https ? checkFrontendValidation(gw, l, certs.configMaps, certs.grants) : undefined;
  // Client certificates asked for with no CA to check them against: not served rather than open.
  const noCa = frontend !== undefined && frontend.validation === undefined;
  const accepted = refused === undefined && !noCa;
  // Without a single usable certificate there is nothing to serve TLS with.
  const usable = accepted && (l.protocol !== 'HTTPS' || certificates.ids.length > 0);
  const kinds = listenerKinds(l);
  return {
    id: `gateway/${gw.namespace}/${gw.name}/listener/${l.name}`,
    listener: l,
    gateway: gw,
    accepted,
    usable,
    supportedKinds: accepted ? kinds.supported : [],
    conditions: [
      refused
        ? condition(T.Accepted, 'False', refused.reason, refused.message, gen)
        : noCa
          ? condition(
              T.Accepted,
              'False',
              Reason.NoValidCACertificate,
              'no client CA certificate is usable',
              gen,
            )
          : condition(T.Accepted, 'True', Reason.Accepted, 'listener accepted', gen),
      conflictedCondition(l, all, gen),
      resolvedRefsCondition(l, certificates, frontend, kinds.unsupported, gen),
      usable
        ? condition(T.Programmed, 'True', Reason.Programmed, 'listener programmed', gen)
        : condition(T.Programmed, 'False', Reason.Invalid, 'listener is not usable', gen),
    ],
    attachedRoutes: 0,
    certificates: certificates.ids,
    ...(frontend?.validation ? { clientValidation: frontend.validation } : {}),
  };
}

/**
 * HTTPS listeners on one port with one hostname, of any Gateways, would share one TLS filter
 * chain (one certificate, one client validation): the first usable one keeps it, Gateways
 * oldest first (creationTimestamp, then namespace/name; file mode has no timestamps, so
 * namespace/name alone), then listeners in their Gateway's order; a later one is conflicted,
 * not served, and takes no routes. The result keeps the order of `gateways`.
 */
function settleHostnameConflicts(gateways: readonly (readonly ListenerState[])[]): ListenerState[][] {
  const first = new Map<string, ListenerState>();
  const settled = gateways.map((listeners) => [...listeners]);
  const slots = gateways.flatMap((listeners, slot) => {
    const gw = listeners[0]?.gateway;
    return gw
      ? [{ slot, namespace: gw.namespace, name: gw.name, creationTimestamp: gw.creationTimestamp }]
      : [];
  });
  for (const { slot } of sortedOlderFirst(slots)) {
    const listeners = settled[slot] ?? [];
    listeners.forEach((l, i) => {
      if (!l.usable || l.listener.protocol !== 'HTTPS') return;
      const key = `${l.listener.port}|${l.listener.hostname ?? ''}`;
      const owner = first.get(key);
      if (owner) listeners[i] = hostnameConflicted(l, owner);
      else first.set(key, l);
    });
  }
  return settled;
}

/** The listener refused because `owner` already serves its hostname on its HTTPS port. */
function hostnameConflicted(l: ListenerState, owner: ListenerState): ListenerState {
  const gen = l.gateway.generation;
  const message = `HTTPS port ${l.listener.port} already serves ${l.listener.hostname ?? 'any hostname'} for listener ${owner.id}; this listener is not served`;
  const replaced: Record<string, Condition> = {
    [T.Accepted]: condition(T.Accepted, 'False', Reason.HostnameConflict, message, gen),
    [T.Conflicted]: condition(T.Conflicted, 'True', Reason.HostnameConflict, message, gen),
    [T.Programmed]: condition(T.Programmed, 'False', Reason.Invalid, message, gen),
  };
  return {
    ...l,
    accepted: false,
    usable: false,
    supportedKinds: [],
    conditions: l.conditions.map((c) => replaced[c.type] ?? c),
  };
}

/** A Gateway steadfast does not serve at all: its conditions say why; no listener is evaluated. */
function unservedGateway(gw: Gateway, conditions: Condition[], foreign?: string): GatewayState {
  return { gateway: gw, ...(foreign ? { foreign } : {}), accepted: false, listeners: [], conditions };
}

/** Why steadfast cannot take the Gateway as written, as its conditions; undefined when it can. */
function gatewayRefusal(gw: Gateway): Condition[] | undefined {
  const gen = gw.generation;
  if (gw.errors.length > 0) {
    return [
      condition(T.Accepted, 'False', Reason.Invalid, 'the Gateway has schema errors', gen),
      condition(T.Programmed, 'False', Reason.Invalid, 'the Gateway has schema errors', gen),
    ];
  }
  const ref = gw.parametersRef;
  if (ref) {
    // steadfast reads no parameters object of any kind, so every reference is one it cannot use.
    const message = `spec.infrastructure.parametersRef: ${ref.group}/${ref.kind} ${ref.name} is not supported: steadfast takes no infrastructure parameters`;
    return [
      condition(T.Accepted, 'False', Reason.InvalidParameters, message, gen),
      condition(T.Programmed, 'False', Reason.Invalid, message, gen),
    ];
  }
  return undefined;
}

/** The Gateway's own conditions from its listeners': accepted with one accepted, programmed with one programmed. */
function gatewayConditions(gw: Gateway, listeners: readonly ListenerState[]): Condition[] {
  const gen = gw.generation;
  const accepted = listeners.filter((l) => l.accepted).length;
  const usable = listeners.filter((l) => l.usable).length;
  const invalid = listeners.length - usable;
  return [
    accepted === 0
      ? condition(T.Accepted, 'False', Reason.ListenersNotValid, 'no listener is valid', gen)
      : invalid > 0
        ? condition(
            T.Accepted,
            'True',
            Reason.ListenersNotValid,
            `${invalid} listener(s) are not usable`,
            gen,
          )
        : condition(T.Accepted, 'True', Reason.Accepted, 'accepted', gen),
    usable === 0
      ? condition(T.Programmed, 'False', Reason.Invalid, 'no listener is usable', gen)
      : condition(T.Programmed, 'True', Reason.Programmed, 'programmed', gen),
  ];
}

/** A served Gateway's state from its listeners' (hostname conflicts settled). */
function servedGateway(
  gw: Gateway,
  listeners: readonly ListenerState[],
  certs: CertificateContext,
): GatewayState {
  const conditions = gatewayConditions(gw, listeners);
  if (insecureFallback(gw)) conditions.push(insecureCondition(gw.generation));
  const client = backendClientCertificate(gw, certs.secrets, certs.grants, certs.material);
  if (client) conditions.push(client.condition);
  return {
    gateway: gw,
    accepted: listeners.some((l) => l.accepted),
    listeners,
    conditions,
    ...(client?.id ? { backendClientCertificate: client.id } : {}),
  };
}

/** Why steadfast leaves the Gateway alone or cannot take it, as its state; undefined when it serves it. */
function unserved(gw: Gateway, classes: ReadonlyMap<string, GatewayClass>): GatewayState | undefined {
  const gc = classes.get(gw.gatewayClassName);
  // File mode: a Gateway is served even when its GatewayClass is absent.
  if (gc && gc.controllerName !== CONTROLLER_NAME) {
    const foreign = `GatewayClass ${gc.name} belongs to controller ${gc.controllerName ?? '(unset)'}; steadfast leaves this Gateway alone`;
    const pending = condition(T.Accepted, 'Unknown', Reason.Pending, foreign, gw.generation);
    return unservedGateway(gw, [pending], foreign);
  }
  const refused = gatewayRefusal(gw);
  return refused ? unservedGateway(gw, refused) : undefined;
}

export function evaluateGateways(
  model: Model,
  material: Record<string, CertificateMaterial> = {},
): Map<string, GatewayState> {
  const certs: CertificateContext = {
    secrets: new Map(model.secrets.map((s) => [`${s.namespace}/${s.name}`, s])),
    configMaps: new Map(model.configMaps.map((c) => [`${c.namespace}/${c.name}`, c])),
    grants: model.referenceGrants,
    material,
  };
  const classes = new Map(model.gatewayClasses.map((c) => [c.name, c]));
  const slots = model.gateways.map((gw) => ({ gw, state: unserved(gw, classes) }));
  // Listeners of every served Gateway first: a hostname conflict spans Gateways.
  const served = slots.filter((s) => s.state === undefined).map((s) => s.gw);
  const listeners = settleHostnameConflicts(
    served.map((gw) => gw.listeners.map((l) => evaluateListener(gw, l, gw.listeners, certs))),
  );
  const out = new Map<string, GatewayState>();
  let next = 0;
  for (const { gw, state } of slots) {
    out.set(gatewayKey(gw.namespace, gw.name), state ?? servedGateway(gw, listeners[next++] ?? [], certs));
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
