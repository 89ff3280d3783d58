// The apiVersion/kind pairs steadfast reads, and the decoder for each.
import { decodeConfigMap, decodeSecret } from './decode/config-data.js';
import { decodeEndpointSlice, decodeNamespace, decodeService } from './decode/core.js';
import { decodeGateway, decodeGatewayClass } from './decode/gateway.js';
import {
  decodeBackendTlsPolicy,
  decodeBackendTrafficPolicy,
  decodeReferenceGrant,
  decodeSessionPersistencePolicy,
} from './decode/policies.js';
import { decodeRoute } from './decode/route.js';
import type { AnyObject } from './model.js';
import type { SourceObject } from './parse.js';

type Decoder = (src: SourceObject) => AnyObject;

const GW = 'gateway.networking.k8s.io';
const GWX = 'gateway.networking.x-k8s.io';

export const KINDS: Readonly<
  Record<string, { readonly versions: readonly string[]; readonly decode: Decoder }>
> = {
  GatewayClass: { versions: [`${GW}/v1`, `${GW}/v1beta1`], decode: decodeGatewayClass },
  Gateway: { versions: [`${GW}/v1`, `${GW}/v1beta1`], decode: decodeGateway },
  HTTPRoute: { versions: [`${GW}/v1`, `${GW}/v1beta1`], decode: (s) => decodeRoute(s, 'HTTPRoute') },
  GRPCRoute: { versions: [`${GW}/v1`], decode: (s) => decodeRoute(s, 'GRPCRoute') },
  ReferenceGrant: { versions: [`${GW}/v1beta1`, `${GW}/v1`], decode: decodeReferenceGrant },
  BackendTLSPolicy: { versions: [`${GW}/v1alpha3`, `${GW}/v1`], decode: decodeBackendTlsPolicy },
  XBackendTrafficPolicy: { versions: [`${GWX}/v1alpha1`], decode: decodeBackendTrafficPolicy },
  SessionPersistencePolicy: { versions: [`${GW}/v1alpha2`], decode: decodeSessionPersistencePolicy },
  Service: { versions: ['v1'], decode: decodeService },
  EndpointSlice: { versions: ['discovery.k8s.io/v1'], decode: decodeEndpointSlice },
  Namespace: { versions: ['v1'], decode: decodeNamespace },
  Secret: { versions: ['v1'], decode: decodeSecret },
  ConfigMap: { versions: ['v1'], decode: decodeConfigMap },
};
