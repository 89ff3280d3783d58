// backendRefs → table backends: Service and port lookup, ReferenceGrant for other
// namespaces, appProtocol → upstream protocol (GEP-1911), and endpoints resolved from
// EndpointSlices the Kubernetes way (Service port → targetPort → EndpointSlice port).
import { exact, sameItems } from '../json.js';
import { Reason } from '../gatewayapi/codes.js';
import type {
  BackendRef,
  EndpointSlice,
  ReferenceGrant,
  Route,
  Service,
  ServicePort,
} from '../gatewayapi/model.js';
import { GATEWAY_GROUP } from '../gatewayapi/patterns.js';
import type { BackendTlsClaim } from './backend-tls-policies.js';
import type {
  TableBackend,
  TableBackendTls,
  TableEndpoint,
  TableRetryConstraint,
  UpstreamProtocol,
} from '../policy/policy-table.js';

const APP_PROTOCOL_H2C = 'kubernetes.io/h2c';
const APP_PROTOCOL_WS = 'kubernetes.io/ws';
const APP_PROTOCOL_WSS = 'kubernetes.io/wss';

export interface BackendContext {
  readonly services: ReadonlyMap<string, Service>;
  /** EndpointSlices by `<ns>/<service>`. */
  readonly slices: ReadonlyMap<string, readonly EndpointSlice[]>;
  readonly referenceGrants: readonly ReferenceGrant[];
  /** The BackendTLSPolicy of a Service (`<ns>/<service>` or `<ns>/<service>/<port name>`). */
  readonly backendTls: ReadonlyMap<string, BackendTlsClaim>;
  readonly retryConstraints: ReadonlyMap<string, TableRetryConstraint>;
  /** Gateway spec.tls.backend: the client certificate id of each Gateway (`<ns>/<name>`) that has a usable one. */
  readonly clientCertificates: ReadonlyMap<string, string>;
}

type Invalid = { reason: string; message: string };

function permitted(route: Route, ref: BackendRef, grants: readonly ReferenceGrant[]): boolean {
  if (ref.namespace === route.namespace) return true;
  return grants.some(
    (g) =>
      g.namespace === ref.namespace &&
      g.errors.length === 0 &&
      g.from.some(
        (f) => f.group === GATEWAY_GROUP && f.kind === route.kind && f.namespace === route.namespace,
      ) &&
      g.to.some(
        (t) => t.group === '' && t.kind === 'Service' && (t.name === undefined || t.name === ref.name),
      ),
  );
}

/** GEP-1911: the upstream protocol a Service port asks for, or why it cannot be served. */
function upstreamProtocol(
  appProtocol: string | undefined,
  routeKind: Route['kind'],
  tls: boolean,
  service: string,
): { protocol: UpstreamProtocol } | Invalid {
  const bad = (message: string): Invalid => ({ reason: Reason.UnsupportedProtocol, message });
  // IANA service names are case-insensitive; the kubernetes.io/ ones are written as defined.
  const iana = appProtocol?.toLowerCase();
  if (appProtocol === undefined || iana === 'http' || iana === 'https') {
    if (iana === 'https' && !tls) return bad(needsPolicy(appProtocol ?? '', service));
    // "Implementations MAY infer the protocol from the Route type": gRPC needs HTTP/2.
    return { protocol: routeKind === 'GRPCRoute' ? 'h2c' : 'http1' };
  }
  if (appProtocol === APP_PROTOCOL_H2C || iana === 'h2c') return { protocol: 'h2c' };
  if (appProtocol === APP_PROTOCOL_WS || appProtocol === APP_PROTOCOL_WSS) {
    if (routeKind === 'GRPCRoute')
      return bad(
        `appProtocol ${appProtocol} of Service ${service} cannot carry gRPC; use ${APP_PROTOCOL_H2C}`,
      );
    if (appProtocol === APP_PROTOCOL_WS) return { protocol: 'ws' };
    if (!tls) return bad(needsPolicy(APP_PROTOCOL_WSS, service));
    return { protocol: 'wss' };
  }
  return bad(
    `appProtocol ${JSON.stringify(appProtocol)} of Service ${service} is not supported; use none, http, h2c, ${APP_PROTOCOL_H2C}, ${APP_PROTOCOL_WS}, or https or ${APP_PROTOCOL_WSS} (with a BackendTLSPolicy)`,
  );
}

function needsPolicy(appProtocol: string, service: string): string {
  return `appProtocol ${appProtocol} of Service ${service} needs a BackendTLSPolicy targeting the Service`;
}

function endpointType(slice: EndpointSlice): TableEndpoint['type'] {
  return slice.addressType === 'IPv6' ? 'ipv6' : slice.addressType === 'FQDN' ? 'fqdn' : 'ipv4';
}

/**
 * The endpoints last resolved for each Service port (an object of its decoded Service), with the
 * slices they came from: the rules that send to one Service port share one list while its
 * slices are the same objects (10,000 rules naming one Service held 10,000 equal lists, 1.7 MiB).
 */
const resolvedFor = new WeakMap<
  ServicePort,
  { readonly slices: readonly EndpointSlice[]; readonly endpoints: readonly TableEndpoint[] }
>();

/** Endpoints of one Service port, the list last resolved for it while its slices are the same. */
function endpointsOf(
  svc: Service,
  sp: ServicePort,
  slices: readonly EndpointSlice[],
): readonly TableEndpoint[] {
  const last = resolvedFor.get(sp);
  if (last && sameItems(last.slices, slices)) return last.endpoints;
  const endpoints = resolveEndpoints(svc, sp, slices);
  resolvedFor.set(sp, { slices, endpoints });
  return endpoints;
}

/** Endpoints of one Service port, from the Service's EndpointSlices. */
function resolveEndpoints(
  svc: Service,
  sp: ServicePort,
  slices: readonly EndpointSlice[],
): readonly TableEndpoint[] {
  if (svc.type === 'ExternalName' && svc.externalName) {
    const port = typeof sp.targetPort === 'number' ? sp.targetPort : sp.port;
    return [{ address: svc.externalName, port, type: 'fqdn', ready: true }];
  }
  const out: TableEndpoint[] = [];
  const seen = new Set<string>();
  for (const slice of slices) {
    // The EndpointSlice controller names slice ports after the Service port and sets the
    // resolved targetPort number; hand-written slices may use the targetPort name or number.
    const port =
      slice.ports.find((p) => (p.name ?? '') === (sp.name ?? '')) ??
      (typeof sp.targetPort === 'string' ? slice.ports.find((p) => p.name === sp.targetPort) : undefined) ??
      (typeof sp.targetPort === 'number' ? slice.ports.find((p) => p.port === sp.targetPort) : undefined);
    if (port?.port === undefined) continue;
    for (const ep of slice.endpoints) {
      for (const address of ep.addresses) {
        const key = `${address}|${port.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ address, port: port.port, type: endpointType(slice), ready: ep.ready });
      }
    }
  }
  // Kept with the rule's table entry: exactly as long as it is (1.1 MiB of slack at 10,000 rules).
  return exact(out);
}

/**
 * The client certificate a route's TLS backends get: that of the Gateways (`<ns>/<name>`) the
 * route is accepted on, when they all name the same (clusters are shared between Gateways;
 * routes of Gateways that disagree present none). A parentRef it did not attach through
 * (foreign, missing, refusing) has no say.
 */
export function routeClientCertificate(
  gateways: readonly string[],
  certificates: ReadonlyMap<string, string>,
): string | undefined {
  const ids = new Set(gateways.map((g) => certificates.get(g)));
  const [only] = ids;
  return ids.size === 1 ? only : undefined;
}

function withClientCertificate(tls: TableBackendTls, id: string | undefined): TableBackendTls {
  return id === undefined ? tls : { ...tls, clientCertificate: id };
}

/**
 * Filters a backendRef may carry: header modifiers apply to the requests sent to that backend
 * only; a redirect or rewrite acts for the whole rule (backend-path-filters.ts).
 */
const BACKEND_FILTERS: readonly string[] = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
];

interface BackendProblem {
  readonly reason: string;
  readonly message: string;
}

/** Why a backendRef cannot be used whatever its Service holds: its kind, a ReferenceGrant, its filters. */
function refProblem(route: Route, ref: BackendRef, ctx: BackendContext): BackendProblem | undefined {
  if (ref.group !== '' || ref.kind !== 'Service') {
    return {
      reason: Reason.InvalidKind,
      message: `backendRef kind ${ref.group === '' ? '' : `${ref.group}/`}${ref.kind} is not supported; only core Service`,
    };
  }
  if (!permitted(route, ref, ctx.referenceGrants)) {
    return {
      reason: Reason.RefNotPermitted,
      message: `no ReferenceGrant in namespace ${ref.namespace} allows ${route.kind} from ${route.namespace} to Service ${ref.name}`,
    };
  }
  const unsupported = ref.filters.filter((f) => !BACKEND_FILTERS.includes(f.type)).map((f) => f.type);
  if (unsupported.length === 0) return undefined;
  return {
    reason: Reason.UnsupportedValue,
    message: `backendRef filters (${unsupported.join(', ')}) are not supported (steadfast supports ${BACKEND_FILTERS.join(', ')} on a backendRef)`,
  };
}

/** The Service and the TCP port the backendRef names, or why it names none. */
function servicePort(
  svcKey: string,
  ref: BackendRef,
  ctx: BackendContext,
): { readonly svc: Service; readonly sp: ServicePort } | BackendProblem {
  const svc = ctx.services.get(svcKey);
  if (!svc) return { reason: Reason.BackendNotFound, message: `Service ${svcKey} not found` };
  if (svc.errors.length > 0)
    return {
      reason: Reason.BackendNotFound,
      message: `Service ${svcKey} is invalid: ${svc.errors[0]?.message ?? ''}`,
    };
  const sp = svc.ports.find((p) => p.port === ref.port);
  if (!sp)
    return {
      reason: Reason.BackendNotFound,
      message: `Service ${svcKey} has no port ${ref.port ?? '(unset)'}`,
    };
  if (sp.protocol !== 'TCP')
    return {
      reason: Reason.UnsupportedProtocol,
      message: `port ${sp.port} of Service ${svcKey} is ${sp.protocol}, not TCP`,
    };
  return { svc, sp };
}

/** `clientCertificate`: the id the route's TLS backends present (routeClientCertificate). */
export function resolveBackend(
  route: Route,
  ref: BackendRef,
  ctx: BackendContext,
  clientCertificate: string | undefined,
): TableBackend {
  const svcKey = `${ref.namespace}/${ref.name}`;
  const base = {
    id: `${svcKey}:${ref.port ?? 0}`,
    namespace: ref.namespace,
    service: ref.name,
    port: ref.port ?? 0,
    weight: ref.weight,
    protocol: 'http1' as UpstreamProtocol,
    endpoints: [] as TableEndpoint[],
  };
  const problem = refProblem(route, ref, ctx);
  if (problem) return { ...base, invalid: { reason: problem.reason, message: problem.message } };
  const requestHeaders = ref.filters.find((f) => f.type === 'RequestHeaderModifier')?.headers;
  const responseHeaders = ref.filters.find((f) => f.type === 'ResponseHeaderModifier')?.headers;
  const found = servicePort(svcKey, ref, ctx);
  if ('reason' in found) return { ...base, invalid: { reason: found.reason, message: found.message } };
  const { svc, sp } = found;
  const slices = ctx.slices.get(svcKey) ?? [];
  const appProtocol =
    sp.appProtocol ??
    slices.flatMap((s) => s.ports).find((p) => (p.name ?? '') === (sp.name ?? ''))?.appProtocol;
  const tls = ctx.backendTls.get(`${svcKey}/${sp.name ?? ''}`) ?? ctx.backendTls.get(svcKey);
  const proto = upstreamProtocol(appProtocol, route.kind, tls !== undefined, svcKey);
  const withProto = { ...base, ...(appProtocol !== undefined ? { appProtocol } : {}) };
  if ('reason' in proto) return { ...withProto, invalid: proto };
  if (tls && 'invalid' in tls) {
    // Never connect unverified: the backend's share answers 500 instead.
    return { ...withProto, invalid: { reason: Reason.UnsupportedProtocol, message: tls.invalid } };
  }
  const retryConstraint = ctx.retryConstraints.get(svcKey);
  return {
    ...withProto,
    protocol: proto.protocol,
    endpoints: endpointsOf(svc, sp, slices),
    // A BackendTLSPolicy means the gateway speaks TLS to the backend, whatever the protocol.
    ...(tls ? { tls: withClientCertificate(tls, clientCertificate) } : {}),
    ...(retryConstraint ? { retryConstraint } : {}),
    ...(requestHeaders ? { requestHeaders } : {}),
    ...(responseHeaders ? { responseHeaders } : {}),
  };
}
