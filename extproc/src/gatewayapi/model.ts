// The typed Gateway API model: what decoding (validate.ts) makes of the YAML objects.
// Every object keeps its source and the field errors the schema found in it.
import type { FieldError } from './fields.js';
import type { SourceObject } from './parse.js';
import type { GrpcRetryReason } from '../policy/policy.js';
import type { HeaderModifier, TableCors, TableRedirect, TableRewrite } from '../policy/route-filters.js';

export interface ModelObject {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly creationTimestamp?: string;
  readonly generation?: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly origin: SourceObject;
  /** Schema and CEL errors found while decoding. */
  readonly errors: readonly FieldError[];
}

export interface GatewayClass extends ModelObject {
  readonly kind: 'GatewayClass';
  readonly controllerName?: string;
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly { key: string; operator: string; values: readonly string[] }[];
}

export interface RouteGroupKind {
  readonly group: string;
  readonly kind: string;
}

export interface Listener {
  readonly index: number;
  readonly name: string;
  readonly hostname?: string;
  readonly port: number;
  readonly protocol: string;
  readonly hasTls: boolean;
  readonly tls?: ListenerTls;
  /** tls.frontendValidation (client certificates) was given: not supported. */
  readonly frontendValidation?: boolean;
  readonly allowedNamespaces: {
    readonly from: 'All' | 'Same' | 'Selector';
    readonly selector?: LabelSelector;
  };
  /** Undefined: the protocol's default kinds. */
  readonly allowedKinds?: readonly RouteGroupKind[];
}

/** A reference to a Secret (or another kind, reported as invalid) holding a certificate. */
export interface SecretObjectRef {
  readonly index: number;
  readonly group: string;
  readonly kind: string;
  /** The Gateway's namespace when unset. */
  readonly namespace: string;
  readonly name: string;
}

export interface ListenerTls {
  readonly mode: 'Terminate' | 'Passthrough';
  readonly certificateRefs: readonly SecretObjectRef[];
}

/** Gateway `spec.tls.frontend.*.validation`: the client certificates HTTPS listeners ask for. */
export interface FrontendValidation {
  /** Where it was written, for messages: `spec.tls.frontend.default.validation` or `…perPort[i].tls.validation`. */
  readonly field: string;
  /** ConfigMaps (key `ca.crt`), or other kinds reported as invalid; the namespace defaults to the Gateway's. */
  readonly caCertificateRefs: readonly SecretObjectRef[];
  readonly mode: 'AllowValidOnly' | 'AllowInsecureFallback';
}

/** Gateway `spec.tls`: client certificates asked of clients (frontend) and presented to backends. */
export interface GatewayTls {
  /** `frontend.default.validation`. */
  readonly frontendDefault?: FrontendValidation;
  /** `frontend.perPort`: the port's own validation (undefined: none at all on that port). */
  readonly frontendPerPort: readonly { readonly port: number; readonly validation?: FrontendValidation }[];
  /** `backend.clientCertificateRef`. */
  readonly backendClientCertificate?: SecretObjectRef;
}

export interface Gateway extends ModelObject {
  readonly kind: 'Gateway';
  readonly gatewayClassName: string;
  readonly listeners: readonly Listener[];
  /** `spec.infrastructure.parametersRef`: an object in the Gateway's namespace with implementation parameters. */
  readonly parametersRef?: { readonly group: string; readonly kind: string; readonly name: string };
  readonly tls?: GatewayTls;
}

export interface ParentRef {
  readonly index: number;
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface BackendRef {
  readonly index: number;
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly port?: number;
  readonly weight: number;
  /** Filters on the backendRef: header modifiers are carried out, any other type fails the backend closed. */
  readonly filters: readonly RouteFilter[];
}

export type StringMatchType = 'Exact' | 'RegularExpression';

export interface HeaderMatch {
  readonly type: StringMatchType;
  readonly name: string;
  readonly value: string;
}

export interface HttpRouteMatch {
  readonly index: number;
  readonly path: { readonly type: 'Exact' | 'PathPrefix' | 'RegularExpression'; readonly value: string };
  readonly method?: string;
  readonly headers: readonly HeaderMatch[];
  readonly queryParams: readonly HeaderMatch[];
}

export interface GrpcRouteMatch {
  readonly index: number;
  readonly method?: { readonly type: StringMatchType; readonly service?: string; readonly method?: string };
  readonly headers: readonly HeaderMatch[];
}

export interface RetrySpec {
  readonly attempts?: number;
  readonly codes: readonly number[];
  readonly backoffMs?: number;
  /** GRPCRoute reasons, normalised to lower-case-dashes. */
  readonly reasons: readonly GrpcRetryReason[];
}

export interface TimeoutsSpec {
  readonly requestMs?: number;
  readonly backendRequestMs?: number;
}

/** Session persistence in any accepted shape, normalised. */
export interface SessionSpec {
  readonly shape: 'v1.5' | 'v1.6' | 'union' | 'policy';
  readonly type: 'Cookie' | 'Header';
  readonly name?: string;
  readonly path?: string;
  readonly lifetime: 'Session' | 'Permanent';
  readonly absoluteTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
}

/** HTTPRequestMirrorFilter: where a copy goes, and for how many requests. */
export interface MirrorSpec {
  readonly backendRef: BackendRef;
  /** Share of requests mirrored, in millionths (percent or fraction; neither: all). */
  readonly perMillion: number;
}

export interface RouteFilter {
  readonly index: number;
  readonly type: string;
  readonly headers?: HeaderModifier;
  readonly redirect?: TableRedirect;
  readonly rewrite?: TableRewrite;
  readonly mirror?: MirrorSpec;
  readonly cors?: TableCors;
}

export interface RouteRule {
  readonly index: number;
  readonly name?: string;
  readonly httpMatches: readonly HttpRouteMatch[];
  readonly grpcMatches: readonly GrpcRouteMatch[];
  readonly filters: readonly RouteFilter[];
  readonly backendRefs: readonly BackendRef[];
  readonly retry?: RetrySpec;
  readonly timeouts?: TimeoutsSpec;
  readonly session?: SessionSpec;
}

export interface Route extends ModelObject {
  readonly kind: 'HTTPRoute' | 'GRPCRoute';
  readonly parentRefs: readonly ParentRef[];
  readonly hostnames: readonly string[];
  readonly rules: readonly RouteRule[];
}

export interface ReferenceGrant extends ModelObject {
  readonly kind: 'ReferenceGrant';
  readonly from: readonly { group: string; kind: string; namespace: string }[];
  readonly to: readonly { group: string; kind: string; name?: string }[];
}

export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  readonly protocol: string;
  readonly targetPort?: number | string;
  readonly appProtocol?: string;
}

export interface Service extends ModelObject {
  readonly kind: 'Service';
  readonly type: string;
  readonly externalName?: string;
  readonly ports: readonly ServicePort[];
}

export interface EndpointSliceEndpoint {
  readonly addresses: readonly string[];
  readonly ready: boolean;
}

export interface EndpointSlice extends ModelObject {
  readonly kind: 'EndpointSlice';
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly serviceName?: string;
  readonly ports: readonly { name?: string; port?: number; protocol: string; appProtocol?: string }[];
  readonly endpoints: readonly EndpointSliceEndpoint[];
}

export interface PolicyTargetRef {
  readonly index: number;
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  readonly sectionName?: string;
}

export interface LocalObjectRef {
  readonly index: number;
  readonly group: string;
  readonly kind: string;
  readonly name: string;
}

export interface SubjectAltName {
  readonly type: 'Hostname' | 'URI';
  readonly value: string;
}

export interface BackendTLSPolicy extends ModelObject {
  readonly kind: 'BackendTLSPolicy';
  readonly targetRefs: readonly PolicyTargetRef[];
  readonly hostname?: string;
  /** ConfigMaps (key `ca.crt`) in the policy's namespace holding the trusted CA certificates. */
  readonly caCertificateRefs: readonly LocalObjectRef[];
  readonly wellKnownCACertificates?: 'System';
  readonly subjectAltNames: readonly SubjectAltName[];
}

/** One value of a Secret or ConfigMap, and the field it was read from (for diagnostics). */
export interface DataValue {
  readonly value: string;
  /** `data` or `stringData` (Secret), `data` (ConfigMap). */
  readonly from: 'data' | 'stringData';
}

/** A core/v1 Secret. Values are decoded text; they never appear in messages or status. */
export interface Secret extends ModelObject {
  readonly kind: 'Secret';
  readonly type: string;
  readonly data: Readonly<Record<string, DataValue>>;
}

export interface ConfigMap extends ModelObject {
  readonly kind: 'ConfigMap';
  readonly data: Readonly<Record<string, DataValue>>;
}

export interface RetryConstraintSpec {
  readonly budgetPercent: number;
  readonly budgetIntervalMs: number;
  readonly minRetryCount: number;
  readonly minRetryIntervalMs: number;
}

export interface BackendTrafficPolicy extends ModelObject {
  readonly kind: 'XBackendTrafficPolicy';
  readonly targetRefs: readonly PolicyTargetRef[];
  readonly retryConstraint?: RetryConstraintSpec;
  readonly session?: SessionSpec;
}

export interface SessionPersistencePolicy extends ModelObject {
  readonly kind: 'SessionPersistencePolicy';
  readonly targetRefs: readonly PolicyTargetRef[];
  readonly session?: SessionSpec;
}

export interface Namespace extends ModelObject {
  readonly kind: 'Namespace';
}

export interface Model {
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly routes: readonly Route[];
  readonly referenceGrants: readonly ReferenceGrant[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly backendTlsPolicies: readonly BackendTLSPolicy[];
  readonly backendTrafficPolicies: readonly BackendTrafficPolicy[];
  readonly sessionPolicies: readonly SessionPersistencePolicy[];
  readonly namespaces: readonly Namespace[];
  readonly secrets: readonly Secret[];
  readonly configMaps: readonly ConfigMap[];
}

export type AnyObject =
  | GatewayClass
  | Gateway
  | Route
  | ReferenceGrant
  | Service
  | EndpointSlice
  | BackendTLSPolicy
  | BackendTrafficPolicy
  | SessionPersistencePolicy
  | Namespace
  | Secret
  | ConfigMap;
