// The shape of a ported Gateway API conformance test: its upstream short name and features,
// the manifest beside it (tests/e2e/conformance/manifests), the Gateway it is sent to, and a
// table of request → expected response (a redirect's status and Location, or what the
// backend received), or of object → expected status (conditions, listeners, route parents,
// policy ancestors, compared as upstream's helpers compare them). Written for steadfast from upstream's tables (conformance/tests at
// the tag in UPSTREAM_TAG); the YAML and the tables are our own.
import type { GrpcCase } from './grpc-case.js';

export const UPSTREAM_TAG = 'v1.6.1';

export interface CaseRequest {
  readonly path: string;
  /** Default GET. */
  readonly method?: string;
  /** The Host header; default `conformance.example`. */
  readonly host?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** TLS server name (SNI) on an HTTPS Gateway; default the Host. */
  readonly serverName?: string;
  /** Send over HTTP/2 (ALPN h2) instead of HTTP/1.1; HTTPS Gateways only. */
  readonly http2?: boolean;
  /** Present this client certificate (conformance/tls-side.ts names them); HTTPS Gateways only. */
  readonly clientCertificate?: string;
}

/** The answer is a redirect: its status and the whole Location. */
export interface RedirectExpectation {
  readonly status: 301 | 302 | 303 | 307 | 308;
  readonly location: string;
}

/** The request reached a backend: which one, and what it received. */
export interface BackendExpectation {
  readonly backend: string;
  readonly path: string;
  readonly host?: string;
  /** Values of repeated headers are joined with ",". */
  readonly headers?: Readonly<Record<string, string>>;
  readonly absentHeaders?: readonly string[];
  /** Backends that must each receive a copy (RequestMirror); the request then carries a `uuid` query to find it. */
  readonly mirroredTo?: readonly string[];
}

/** The request sent `count` times: each answer must come from the backend the header names. */
export interface RepeatedExpectation {
  readonly count: number;
  /** A request header the backend must see exactly once, naming the backend itself. */
  readonly headerNamesBackend: string;
}

/** What the answer itself must carry (the gateway's own answer, or the backend's as passed on). */
export interface ResponseExpectation {
  /** Any of these statuses. */
  readonly statuses: readonly number[];
  /** Each header must have one of the values given (lower-case names). */
  readonly headers?: Readonly<Record<string, readonly string[]>>;
  readonly absentHeaders?: readonly string[];
  /** Compare header values without their whitespace (", " and "," are the same list). */
  readonly ignoreWhitespace?: boolean;
}

export interface RequestCase {
  readonly request: CaseRequest;
  readonly response?: ResponseExpectation;
  readonly repeated?: RepeatedExpectation;
  readonly redirect?: RedirectExpectation;
  readonly forwarded?: BackendExpectation;
  /** The gateway refuses the exchange: the TLS handshake or the connection fails, no answer comes. */
  readonly refused?: true;
}

/** A condition as upstream expects it: type and status, and the reason unless any will do. */
export interface ConditionExpectation {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
}

/**
 * One Gateway listener's status, compared as upstream's GatewayStatusMustHaveListeners does:
 * every kind named is supported (more may be; none at all when the list is empty),
 * attachedRoutes is equal, and every condition named is present.
 */
export interface ListenerExpectation {
  readonly name: string;
  /** Kinds of the gateway.networking.k8s.io group. */
  readonly supportedKinds: readonly string[];
  readonly attachedRoutes: number;
  readonly conditions: readonly ConditionExpectation[];
}

/** A route's status for one parent (a Gateway, by name; its listener when sectionName is given). */
export interface ParentExpectation {
  readonly gateway: string;
  readonly namespace?: string;
  readonly sectionName?: string;
  readonly conditions: readonly ConditionExpectation[];
}

/** A policy's status for one ancestor (by kind and name). */
export interface AncestorExpectation {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly sectionName?: string;
  readonly conditions: readonly ConditionExpectation[];
}

/** What the control service reports for one object (as /v1/status serves it). */
export interface StatusExpectation {
  readonly kind: string;
  readonly name: string;
  /** Default `default`. */
  readonly namespace?: string;
  /** The object's own conditions (each present). */
  readonly conditions?: readonly ConditionExpectation[];
  /** A Gateway's listeners: exactly these, by name. */
  readonly listeners?: readonly ListenerExpectation[];
  /** Conditions of some of a Gateway's listeners, by name (upstream's GatewayListenerMustHaveConditions). */
  readonly listenerConditions?: Readonly<Record<string, readonly ConditionExpectation[]>>;
  readonly parents?: readonly ParentExpectation[];
  readonly ancestors?: readonly AncestorExpectation[];
  /** Every condition of the object (its own, listeners', parents', ancestors') observed this generation. */
  readonly observedGeneration?: number;
}

export interface StatusCase {
  readonly status: StatusExpectation;
  /**
   * A change upstream makes before it checks (a patch to an object): the run writes
   * manifests/`manifest` in place of the test's manifest `file`, then waits for the status.
   */
  readonly apply?:
    | { readonly file: string; readonly manifest: string }
    /** One of the documents the run makes at start (conformance/tls-side.ts `variants`), by name. */
    | { readonly file: string; readonly made: string };
}

/** One row of a ported table: a request and its answer, an object and its status, or a gRPC call. */
export type ConformanceCase = RequestCase | StatusCase | GrpcCase;

export function isStatusCase(c: ConformanceCase): c is StatusCase {
  return 'status' in c;
}

export function isGrpcCase(c: ConformanceCase): c is GrpcCase {
  return 'grpc' in c;
}

export interface ConformanceTest {
  /** Upstream's ShortName. */
  readonly shortName: string;
  /** Upstream's features the test needs (their names without the `Support` prefix). */
  readonly features: readonly string[];
  /** File names under manifests/. */
  readonly manifests: readonly string[];
  /** Upstream's t.Run group where a test has several (e.g. `http-listener-on-8080`). */
  readonly group?: string;
  /** The Gateway the requests go to, by name; default `same-namespace`. */
  readonly gateway?: string;
  /** Its listener, by name; default `http` (`https` on an HTTPS Gateway). */
  readonly listener?: string;
  /** The Envoy listener, where one port serves several Gateway listeners (`port/<n>`). */
  readonly envoyListener?: string;
  /** The Gateway's listener is HTTPS (default: it is one of HTTPS_GATEWAYS). */
  readonly https?: boolean;
  /** Ports the test's own Gateways declare (besides GATEWAY_PORTS): the run binds each on a free port. */
  readonly ports?: readonly number[];
  readonly cases: readonly ConformanceCase[];
}

/** The Gateways of manifests/gateways.yaml (and of tests that bring their own) and the port each declares. */
export const GATEWAY_PORTS: Readonly<Record<string, number>> = {
  'same-namespace': 80,
  'same-namespace-with-http-listener-on-8080': 8080,
  'same-namespace-with-https-listener': 443,
  'httproute-hostname-intersection': 8090,
  'httproute-hostname-intersection-all': 8091,
};

/** Gateways whose listener is HTTPS (named `https`); requests go with SNI and Host example.org. */
export const HTTPS_GATEWAYS: readonly string[] = ['same-namespace-with-https-listener'];

export const DEFAULT_HOST = 'conformance.example';

/** The describe block of one test: `<ShortName>[/<group>] [<features>]` (scripts/conformance-table.mjs reads it). */
export function conformanceTitle(test: ConformanceTest): string {
  return `${test.shortName}${test.group ? `/${test.group}` : ''} [${test.features.join(', ')}]`;
}
