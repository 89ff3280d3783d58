// The upstream schema's string patterns (apis/v1/shared_types.go), in one place.
export const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const PRECISE_HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const GROUP = /^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const KIND = /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
export const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const SECTION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** HeaderName and CookieName: an RFC 7230 token. */
export const TOKEN = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
/** GEP-2257. */
export const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
/** Characters allowed in Exact and PathPrefix path values. */
export const PATH_CHARS = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
export const GRPC_SERVICE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
export const GRPC_METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;
/** GatewayClass controllerName: DOMAIN "/" PATH. */
export const CONTROLLER =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
export const PROTOCOL =
  /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/;
/** RFC 1123 DNS label, for Service and object names where Kubernetes asks for it. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
