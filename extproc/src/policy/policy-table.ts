// The PolicyTable: everything both modes need from the Gateway API objects, as plain
// serializable data free of Kubernetes types. translate/ writes it; resolve/ and the
// Envoy config generator read it. Names trace back to the objects they came from.
import type { Policy } from './policy.js';
import type { HeaderModifier, TableCors, TableRedirect, TableRewrite } from './route-filters.js';

export const POLICY_TABLE_VERSION = 1;

export interface PolicyTable {
  readonly version: typeof POLICY_TABLE_VERSION;
  readonly listeners: readonly TableListener[];
  /** Routes in Gateway API precedence order (oldest first, then namespace/name). */
  readonly routes: readonly TableRoute[];
}

export interface TableListener {
  /** `gateway/<ns>/<name>/listener/<listener>` */
  readonly id: string;
  readonly gateway: string;
  readonly name: string;
  readonly port: number;
  readonly hostname?: string;
  readonly protocol: string;
  /** HTTPS listeners: the certificates to present, by id (`secret/<ns>/<name>`); the key pairs travel beside the table. */
  readonly tls?: {
    readonly certificates: readonly string[];
    readonly clientValidation?: TableClientValidation;
  };
}

/** Gateway `spec.tls.frontend` for one HTTPS listener: the client certificates it asks for. */
export interface TableClientValidation {
  /** PEM CA certificates a client certificate must chain to. */
  readonly caCertificates: string;
  /** AllowValidOnly: a valid certificate is required; AllowInsecureFallback: asked for, never required. */
  readonly mode: 'AllowValidOnly' | 'AllowInsecureFallback';
}

export type TableRouteKind = 'http' | 'grpc';

export interface TableRoute {
  /** `httproute/<ns>/<name>` or `grpcroute/<ns>/<name>` */
  readonly id: string;
  readonly kind: TableRouteKind;
  readonly namespace: string;
  readonly name: string;
  /** RFC 3339; absent when the object had none (ties then fall to namespace/name). */
  readonly creationTimestamp?: string;
  /** Listener ids the route is attached to. */
  readonly listeners: readonly string[];
  /** Effective hostnames (route ∩ listener); `*` matches any host. */
  readonly hostnames: readonly string[];
  readonly rules: readonly TableRule[];
}

export type StringMatch = {
  readonly type: 'Exact' | 'RegularExpression';
  readonly name: string;
  readonly value: string;
};

export interface TableMatch {
  /** `<rule id>/match/<j>` */
  readonly id: string;
  readonly path: { readonly type: 'Exact' | 'PathPrefix' | 'RegularExpression'; readonly value: string };
  readonly method?: string;
  readonly headers: readonly StringMatch[];
  readonly queryParams: readonly StringMatch[];
  /** GRPCRoute method match; `path` then holds the equivalent `/service/method` match. */
  readonly grpc?: {
    readonly type: 'Exact' | 'RegularExpression';
    readonly service?: string;
    readonly method?: string;
  };
}

export type UpstreamProtocol = 'http1' | 'h2c' | 'ws' | 'wss';

export interface TableEndpoint {
  /** An IP address (v4 or v6, without brackets) or an FQDN. */
  readonly address: string;
  readonly port: number;
  readonly type: 'ipv4' | 'ipv6' | 'fqdn';
  readonly ready: boolean;
}

export interface TableRetryConstraint {
  /** `xbackendtrafficpolicy/<ns>/<name>` */
  readonly policy: string;
  readonly budgetPercent: number;
  readonly budgetIntervalMs: number;
  readonly minRetryCount: number;
  readonly minRetryIntervalMs: number;
}

/** BackendTLSPolicy, as a backend's connection needs it. */
export interface TableBackendTls {
  /** `backendtlspolicy/<ns>/<name>` */
  readonly policy: string;
  /** SNI, and the name the certificate must carry unless subjectAltNames are given. */
  readonly hostname: string;
  /** When given, the certificate must carry one of these instead of `hostname`. */
  readonly subjectAltNames: readonly { readonly type: 'Hostname' | 'URI'; readonly value: string }[];
  /** PEM CA certificates to trust (caCertificateRefs); absent: the system bundle (wellKnownCACertificates: System). */
  readonly caCertificates?: string;
  /** The client certificate to present (`secret/<ns>/<name>`, Gateway spec.tls.backend); its key pair travels beside the table. */
  readonly clientCertificate?: string;
}

export interface TableBackend {
  /** `<ns>/<service>:<port>` */
  readonly id: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: number;
  readonly weight: number;
  readonly protocol: UpstreamProtocol;
  /** The Service port's appProtocol, as written. */
  readonly appProtocol?: string;
  readonly endpoints: readonly TableEndpoint[];
  /** Set when a BackendTLSPolicy targets the Service (or its port): connect with TLS and verify. */
  readonly tls?: TableBackendTls;
  readonly retryConstraint?: TableRetryConstraint;
  /** The backendRef's own header modifiers, applied only to requests sent to it. */
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
  /** Set when the reference does not resolve: requests sent its share answer 500. */
  readonly invalid?: { readonly reason: string; readonly message: string };
}

/** RequestMirror: a copy of the request to one backend, for a share of requests; its answer is dropped. */
export interface TableMirror {
  readonly backend: TableBackend;
  /** Share of requests mirrored, in millionths. */
  readonly perMillion: number;
}

export interface TableRule {
  /** `httproute/<ns>/<name>/rule/<i>` (or grpcroute/...) */
  readonly id: string;
  readonly index: number;
  readonly name?: string;
  readonly matches: readonly TableMatch[];
  readonly backends: readonly TableBackend[];
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
  readonly redirect?: TableRedirect;
  readonly rewrite?: TableRewrite;
  /** RequestMirror filters; one whose backend does not resolve is left out of Envoy and reported in ResolvedRefs. */
  readonly mirrors?: readonly TableMirror[];
  readonly cors?: TableCors;
  readonly policy: Policy;
  /** Where the session persistence came from: `rule`, or the policy, e.g. `sessionpersistencepolicy/<ns>/<name>`. */
  readonly sessionFrom?: string;
  /** encodePolicyToken(policy): what reaches the filter. */
  readonly token: string;
  /** Fail closed: the rule stays in the table and requests to it answer 500. */
  readonly invalid?: { readonly reason: string; readonly message: string };
}
