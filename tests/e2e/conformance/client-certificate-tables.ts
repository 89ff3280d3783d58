// Client certificates: upstream's GatewayFrontendClientCertificateValidation,
// GatewayFrontendClientCertificateValidationInsecureFallback,
// GatewayInvalidFrontendClientCertificateValidation and
// GatewayFrontendInvalidDefaultClientCertificateValidation, and the other way,
// GatewayTLSBackendClientCertificate and GatewayInvalidTLSBackendConfiguration; each subtest a
// case — a request
// with (or without) a client certificate from the run's client CAs (conformance/tls-side.ts),
// answered by the backend or refused in the handshake, or a Gateway's or listener's status. Their
// Gateways listen on ports of their own (96xx), as all manifests are served at once.
import type { ConditionExpectation, ConformanceCase, ConformanceTest } from './conformance-case.js';

const DEFAULT_CLIENT = 'tls-validity-checks-client-certificate';
const PER_PORT_CLIENT = 'tls-validity-checks-per-port-client-certificate';
const V1 = 'infra-backend-v1';
const V2 = 'infra-backend-v2';
const FEATURES = ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation'];

/** Over TLS to `host`, presenting `client` (or none): the request reaches `backend`. */
function served(host: string, client: string | undefined, backend: string): ConformanceCase {
  return {
    request: { host, path: '/', ...(client ? { clientCertificate: client } : {}) },
    forwarded: { backend, path: '/' },
  };
}

/** Over TLS to `host`, presenting `client` (or none): the gateway refuses it. */
function refused(host: string, client: string | undefined): ConformanceCase {
  return { request: { host, path: '/', ...(client ? { clientCertificate: client } : {}) }, refused: true };
}

function listener(gateway: string, name: string, ...conditions: ConditionExpectation[]): ConformanceCase {
  // Only the conditions matter here (upstream's GatewayListenerMustHaveConditions).
  return { status: { kind: 'Gateway', name: gateway, listenerConditions: { [name]: conditions } } };
}

const ALL_TRUE: ConditionExpectation[] = [
  { type: 'ResolvedRefs', status: 'True' },
  { type: 'Accepted', status: 'True' },
  { type: 'Programmed', status: 'True' },
];

/** A listener whose only client CA reference fails with `reason`. */
function noValidCa(reason: string): ConditionExpectation[] {
  return [
    { type: 'ResolvedRefs', status: 'False', reason },
    { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' },
    { type: 'Programmed', status: 'False' },
  ];
}

const VALIDATION = 'client-validation-default';
const FALLBACK = 'client-validation-insecure-fallback';
const INVALID = 'gateway-with-invalid-client-cert-validation';
const INVALID_DEFAULT = 'invalid-default-client-validation-config';

export const CLIENT_CERTIFICATE_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'GatewayFrontendClientCertificateValidation',
    group: 'default',
    features: FEATURES,
    manifests: ['gateway-with-clientcertificate-validation.yaml'],
    gateway: VALIDATION,
    https: true,
    ports: [9641, 9642],
    cases: [served('example.org', DEFAULT_CLIENT, V1), refused('example.org', PER_PORT_CLIENT)],
  },
  {
    shortName: 'GatewayFrontendClientCertificateValidation',
    group: 'per-port',
    features: FEATURES,
    manifests: ['gateway-with-clientcertificate-validation.yaml'],
    gateway: VALIDATION,
    listener: 'https-with-hostname',
    https: true,
    ports: [9641, 9642],
    cases: [served('second-example.org', PER_PORT_CLIENT, V2), refused('second-example.org', DEFAULT_CLIENT)],
  },
  {
    shortName: 'GatewayFrontendClientCertificateValidationInsecureFallback',
    group: 'default',
    features: [...FEATURES, 'GatewayFrontendClientCertificateValidationInsecureFallback'],
    manifests: ['gateway-with-clientcertificate-validation-insecure-fallback.yaml'],
    gateway: FALLBACK,
    https: true,
    ports: [9643, 9644],
    cases: [
      {
        status: {
          kind: 'Gateway',
          name: FALLBACK,
          conditions: [
            { type: 'InsecureFrontendValidationMode', status: 'True', reason: 'ConfigurationChanged' },
          ],
        },
      },
      served('example.org', DEFAULT_CLIENT, V1),
      served('example.org', PER_PORT_CLIENT, V1),
      served('example.org', undefined, V1),
    ],
  },
  {
    shortName: 'GatewayFrontendClientCertificateValidationInsecureFallback',
    group: 'per-port',
    features: [...FEATURES, 'GatewayFrontendClientCertificateValidationInsecureFallback'],
    manifests: ['gateway-with-clientcertificate-validation-insecure-fallback.yaml'],
    gateway: FALLBACK,
    listener: 'https-with-hostname',
    https: true,
    ports: [9643, 9644],
    cases: [
      served('second-example.org', PER_PORT_CLIENT, V2),
      served('second-example.org', DEFAULT_CLIENT, V2),
      served('second-example.org', undefined, V2),
    ],
  },
  {
    shortName: 'GatewayInvalidFrontendClientCertificateValidation',
    features: ['Gateway', 'HTTPRoute', 'ReferenceGrant', 'GatewayFrontendClientCertificateValidation'],
    manifests: ['gateway-with-invalid-clientcertificate-validation.yaml'],
    ports: [9645, 9646, 9647, 9648],
    cases: [
      listener(INVALID, 'https', ...ALL_TRUE),
      listener(INVALID, 'https-unresolved', ...noValidCa('InvalidCACertificateRef')),
      listener(INVALID, 'https-invalid-kind', ...noValidCa('InvalidCACertificateKind')),
      listener(INVALID, 'https-grant-missing', ...noValidCa('RefNotPermitted')),
    ],
  },
  {
    shortName: 'GatewayFrontendInvalidDefaultClientCertificateValidation',
    group: 'http',
    features: FEATURES,
    manifests: ['gateway-invalid-default-frontend-client-certificate-validation.yaml'],
    gateway: INVALID_DEFAULT,
    ports: [9649, 9650],
    cases: [
      listener(INVALID_DEFAULT, 'http', ...ALL_TRUE),
      { request: { host: 'example.org', path: '/' }, forwarded: { backend: V1, path: '/' } },
    ],
  },
  {
    shortName: 'GatewayFrontendInvalidDefaultClientCertificateValidation',
    group: 'https',
    features: FEATURES,
    manifests: ['gateway-invalid-default-frontend-client-certificate-validation.yaml'],
    gateway: INVALID_DEFAULT,
    https: true,
    ports: [9649, 9650],
    cases: [
      listener(INVALID_DEFAULT, 'https', ...noValidCa('InvalidCACertificateRef')),
      refused('example.org', undefined),
    ],
  },
  {
    shortName: 'GatewayTLSBackendClientCertificate',
    features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'],
    manifests: ['gateway-tls-backend-client-certificate.yaml'],
    gateway: 'gateway-tls-backend-client-certificate',
    ports: [9651],
    cases: [
      gatewayResolvedRefs('gateway-tls-backend-client-certificate', 'True', 'ResolvedRefs'),
      {
        status: {
          kind: 'BackendTLSPolicy',
          name: 'gateway-tls-backend-client-certificate-test',
          ancestors: [
            {
              kind: 'Gateway',
              name: 'gateway-tls-backend-client-certificate',
              conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
            },
          ],
        },
      },
      // The backend accepts only clients with a certificate from its CA, and names the one it got.
      {
        request: { host: 'abc.example.com', path: '/' },
        response: {
          statuses: [200],
          headers: { 'x-backend-tls-client-cn': ['tls-checks-client-certificate'] },
        },
      },
    ],
  },
  {
    shortName: 'GatewayInvalidTLSBackendConfiguration',
    features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'],
    manifests: ['gateway-invalid-tls-backend-configuration.yaml'],
    ports: [9652, 9653, 9654, 9655, 9656],
    cases: [
      gatewayResolvedRefs(
        'gateway-client-certificate-nonexistent-secret',
        'False',
        'InvalidClientCertificateRef',
      ),
      gatewayResolvedRefs(
        'gateway-client-certificate-unsupported-group',
        'False',
        'InvalidClientCertificateRef',
      ),
      gatewayResolvedRefs(
        'gateway-client-certificate-unsupported-kind',
        'False',
        'InvalidClientCertificateRef',
      ),
      gatewayResolvedRefs(
        'gateway-client-certificate-malformed-secret',
        'False',
        'InvalidClientCertificateRef',
      ),
      gatewayResolvedRefs('gateway-client-certificate-missing-reference-grant', 'False', 'RefNotPermitted'),
    ],
  },
];

/** The Gateway's ResolvedRefs (for its backend client certificate), and Accepted=True beside it. */
function gatewayResolvedRefs(name: string, status: 'True' | 'False', reason: string): ConformanceCase {
  return {
    status: {
      kind: 'Gateway',
      name,
      conditions: [
        { type: 'ResolvedRefs', status, reason },
        { type: 'Accepted', status: 'True', reason: 'Accepted' },
      ],
    },
  };
}
