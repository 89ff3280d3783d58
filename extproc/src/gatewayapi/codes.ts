// The one catalogue of codes a user can meet: diagnostic codes (ours) and the
// condition types and reasons written to status (the upstream Gateway API strings).

/** Diagnostic codes, each with the one-line meaning shown in docs and `--output json`. */
export const DIAGNOSTIC_CODES = {
  'yaml-syntax': 'the file is not valid YAML',
  'not-an-object': 'a YAML document is not a mapping with apiVersion and kind',
  'unknown-kind': 'apiVersion/kind is not one steadfast reads; the object is ignored',
  'missing-field': 'a required field is absent',
  'wrong-type': 'a field has the wrong type',
  'unknown-field': 'a field the schema does not define',
  'out-of-range': 'a number is outside its allowed range',
  'too-long': 'a string or list is longer than allowed',
  'too-short': 'a string or list is shorter than allowed',
  'bad-format': 'a string does not match its required pattern',
  'not-in-enum': 'a value is not one of the allowed values',
  'rule-violation': 'a cross-field (CEL) rule of the schema is violated',
  'reserved-header':
    "a RequestHeaderModifier names a retry or timeout control header of Envoy's router (x-envoy-retry-on, …); the rule fails closed",
  'duplicate-object': 'two objects share apiVersion group, kind, namespace and name',
  'io-error': 'a file or directory could not be read',
  'no-ready-endpoints': "a backendRef's Service has no ready endpoint; requests sent there are answered 503",
  'underscore-session-header':
    'a Header session is named with "_", which gateway mode drops from requests: its tokens never come back',
} as const;
export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;

export const CONTROLLER_NAME = 'steadfast.dev/gateway-controller';

export const ConditionType = {
  Accepted: 'Accepted',
  Programmed: 'Programmed',
  ResolvedRefs: 'ResolvedRefs',
  Conflicted: 'Conflicted',
  PartiallyInvalid: 'PartiallyInvalid',
  InsecureFrontendValidationMode: 'InsecureFrontendValidationMode',
} as const;

/** Condition reasons, spelled as upstream (apis/v1 and the policy-attachment GEP-713). */
export const Reason = {
  // GatewayClass, Gateway, Listener, Route, Policy: all true
  Accepted: 'Accepted',
  Programmed: 'Programmed',
  ResolvedRefs: 'ResolvedRefs',
  NoConflicts: 'NoConflicts',
  Pending: 'Pending',
  // GatewayClass
  Unsupported: 'Unsupported',
  InvalidParameters: 'InvalidParameters',
  // Gateway
  Invalid: 'Invalid',
  ListenersNotValid: 'ListenersNotValid',
  InvalidClientCertificateRef: 'InvalidClientCertificateRef',
  ConfigurationChanged: 'ConfigurationChanged',
  // Listener
  UnsupportedProtocol: 'UnsupportedProtocol',
  InvalidRouteKinds: 'InvalidRouteKinds',
  InvalidCertificateRef: 'InvalidCertificateRef',
  InvalidCACertificateKind: 'InvalidCACertificateKind',
  ProtocolConflict: 'ProtocolConflict',
  HostnameConflict: 'HostnameConflict',
  // Route parents
  NoMatchingParent: 'NoMatchingParent',
  NotAllowedByListeners: 'NotAllowedByListeners',
  NoMatchingListenerHostname: 'NoMatchingListenerHostname',
  UnsupportedValue: 'UnsupportedValue',
  IncompatibleFilters: 'IncompatibleFilters',
  BackendNotFound: 'BackendNotFound',
  RefNotPermitted: 'RefNotPermitted',
  InvalidKind: 'InvalidKind',
  // Policies
  Conflicted: 'Conflicted',
  TargetNotFound: 'TargetNotFound',
  // BackendTLSPolicy
  NoValidCACertificate: 'NoValidCACertificate',
  InvalidCACertificateRef: 'InvalidCACertificateRef',
} as const;
export type ReasonName = (typeof Reason)[keyof typeof Reason];
