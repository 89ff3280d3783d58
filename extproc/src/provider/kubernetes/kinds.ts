// The kinds the Kubernetes provider lists and watches: every kind the compiler reads
// (gatewayapi/kinds.ts), each at the version the API server is asked for, and which of them
// carry status steadfast writes.

export interface WatchedKind {
  readonly kind: string;
  /** group/version ('v1' for the core group). */
  readonly apiVersion: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /**
   * A kind whose CRD may not be installed (experimental or steadfast's own): when the API
   * server does not serve it, the provider says so once and looks again now and then.
   */
  readonly optional: boolean;
  /** Where the status steadfast writes goes, if it writes any. */
  readonly status?: 'gatewayclass' | 'gateway' | 'route' | 'policy';
  /** Only the objects this field selector picks are read. */
  readonly fieldSelector?: string;
}

const GW = 'gateway.networking.k8s.io';
const GWX = 'gateway.networking.x-k8s.io';

export const WATCHED_KINDS: readonly WatchedKind[] = [
  {
    kind: 'GatewayClass',
    apiVersion: `${GW}/v1`,
    plural: 'gatewayclasses',
    namespaced: false,
    optional: false,
    status: 'gatewayclass',
  },
  {
    kind: 'Gateway',
    apiVersion: `${GW}/v1`,
    plural: 'gateways',
    namespaced: true,
    optional: false,
    status: 'gateway',
  },
  {
    kind: 'HTTPRoute',
    apiVersion: `${GW}/v1`,
    plural: 'httproutes',
    namespaced: true,
    optional: false,
    status: 'route',
  },
  {
    kind: 'GRPCRoute',
    apiVersion: `${GW}/v1`,
    plural: 'grpcroutes',
    namespaced: true,
    optional: true,
    status: 'route',
  },
  {
    kind: 'ReferenceGrant',
    apiVersion: `${GW}/v1beta1`,
    plural: 'referencegrants',
    namespaced: true,
    optional: true,
  },
  {
    kind: 'BackendTLSPolicy',
    apiVersion: `${GW}/v1`,
    plural: 'backendtlspolicies',
    namespaced: true,
    optional: true,
    status: 'policy',
  },
  {
    kind: 'XBackendTrafficPolicy',
    apiVersion: `${GWX}/v1alpha1`,
    plural: 'xbackendtrafficpolicies',
    namespaced: true,
    optional: true,
    status: 'policy',
  },
  {
    kind: 'SessionPersistencePolicy',
    apiVersion: `${GW}/v1alpha2`,
    plural: 'sessionpersistencepolicies',
    namespaced: true,
    optional: true,
    status: 'policy',
  },
  { kind: 'Service', apiVersion: 'v1', plural: 'services', namespaced: true, optional: false },
  {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    plural: 'endpointslices',
    namespaced: true,
    optional: false,
  },
  { kind: 'Namespace', apiVersion: 'v1', plural: 'namespaces', namespaced: false, optional: false },
  // Only the type a listener's certificateRefs may name: a cluster's other Secrets (Helm
  // releases, tokens) are neither held nor a reason to compile. The session key Secret is
  // watched on its own (provider.ts).
  {
    kind: 'Secret',
    apiVersion: 'v1',
    plural: 'secrets',
    namespaced: true,
    optional: false,
    fieldSelector: 'type=kubernetes.io/tls',
  },
  { kind: 'ConfigMap', apiVersion: 'v1', plural: 'configmaps', namespaced: true, optional: false },
];

/** The path that lists a kind, in every namespace or in one, with its field selector. */
export function listPath(k: WatchedKind, namespace?: string, fieldSelector = k.fieldSelector): string {
  const base = k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  const ns = namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const query = fieldSelector !== undefined ? `?fieldSelector=${encodeURIComponent(fieldSelector)}` : '';
  return `${base}${ns}/${k.plural}${query}`;
}

/** The path of one object (and `/status` after it for its status). */
export function objectPath(k: WatchedKind, namespace: string | undefined, name: string): string {
  const base = k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  const ns = k.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
  return `${base}${ns}/${k.plural}/${encodeURIComponent(name)}`;
}
