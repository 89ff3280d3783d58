// BackendTLSPolicy: upstream's BackendTLSPolicy, BackendTLSPolicySANValidation,
// BackendTLSPolicyConflictResolution, BackendTLSPolicyInvalidCACertificateRef and
// BackendTLSPolicyInvalidKind, each subtest a case: the policy's status on its ancestor (the
// Gateway same-namespace) and a request through it. The TLS backend reports the server name
// the gateway sent (x-backend-tls-server-name), as upstream's echo server reports the SNI.
// BackendTLSPolicy's reconcile subtest changes the policy, then makes, empties and restores its
// ConfigMap, each change followed by the status it must lead to.
import type {
  ConditionExpectation,
  ConformanceCase,
  ConformanceTest,
  StatusCase,
} from './conformance-case.js';

const HOST = 'abc.example.com';
const ACCEPTED: ConditionExpectation = { type: 'Accepted', status: 'True', reason: 'Accepted' };
const RESOLVED: ConditionExpectation = { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' };
const NO_VALID_CA: ConditionExpectation = {
  type: 'Accepted',
  status: 'False',
  reason: 'NoValidCACertificate',
};
const INVALID_CA_REF: ConditionExpectation = {
  type: 'ResolvedRefs',
  status: 'False',
  reason: 'InvalidCACertificateRef',
};
const CONFLICTED: ConditionExpectation = { type: 'Accepted', status: 'False', reason: 'Conflicted' };

/** The policy's conditions on its ancestor, the Gateway same-namespace (or `gateway`). */
function policy(name: string, ...conditions: ConditionExpectation[]): StatusCase {
  return policyOn('same-namespace', name, ...conditions);
}

function policyOn(gateway: string, name: string, ...conditions: ConditionExpectation[]): StatusCase {
  return {
    status: { kind: 'BackendTLSPolicy', name, ancestors: [{ kind: 'Gateway', name: gateway, conditions }] },
  };
}

/** Answered 200 by the TLS backend, which was sent `serverName` as SNI. */
function served(path: string, serverName = HOST): ConformanceCase {
  return {
    request: { host: HOST, path },
    response: { statuses: [200], headers: { 'x-backend-tls-server-name': [serverName] } },
  };
}

/** The gateway answers an error: the backend's handshake failed (503) or the backend is refused (500). */
function failed(path: string): ConformanceCase {
  return { request: { host: HOST, path }, response: { statuses: [500, 502, 503] } };
}

const FEATURES = ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'];

export const BACKEND_TLS_TESTS: readonly ConformanceTest[] = [
  {
    shortName: 'BackendTLSPolicy',
    group: 're-encrypt',
    features: FEATURES,
    manifests: ['backendtlspolicy.yaml'],
    gateway: 'same-namespace-with-https-listener',
    cases: [
      policy('normative-test', ACCEPTED, RESOLVED),
      {
        request: { host: 'https-listener.org', path: '/backendtlspolicy' },
        response: { statuses: [200], headers: { 'x-backend-tls-server-name': [HOST] } },
      },
    ],
  },
  {
    shortName: 'BackendTLSPolicy',
    group: 'http',
    features: FEATURES,
    manifests: ['backendtlspolicy.yaml'],
    cases: [
      policy('normative-test', ACCEPTED, RESOLVED),
      served('/backendtlspolicy'),
      policy('host-mismatch', ACCEPTED, RESOLVED),
      // Upstream sends Host abc.example.org, which no route serves (a 404 passes there); the
      // route's own host makes the failure the handshake's.
      failed('/backendtlspolicy-host-mismatch'),
      policy('cert-mismatch', ACCEPTED, RESOLVED),
      failed('/backendtlspolicy-cert-mismatch'),
    ],
  },
  {
    shortName: 'BackendTLSPolicy',
    group: 'reconcile',
    features: FEATURES,
    manifests: ['backendtlspolicy-reconcile.yaml'],
    cases: [
      policy('reconcile-test', ACCEPTED, RESOLVED),
      {
        apply: {
          file: 'backendtlspolicy-reconcile.yaml',
          manifest: 'backendtlspolicy-reconcile-patched.yaml',
        },
        ...policy('reconcile-test', NO_VALID_CA, INVALID_CA_REF),
      },
      {
        apply: { file: 'reconcile-ca.yaml', made: 'reconcile-ca' },
        ...policy('reconcile-test', ACCEPTED, RESOLVED),
      },
      {
        apply: { file: 'reconcile-ca.yaml', made: 'reconcile-ca-empty' },
        ...policy('reconcile-test', NO_VALID_CA, INVALID_CA_REF),
      },
      {
        apply: { file: 'reconcile-ca.yaml', made: 'reconcile-ca' },
        ...policy('reconcile-test', ACCEPTED, RESOLVED),
      },
    ],
  },
  {
    shortName: 'BackendTLSPolicySANValidation',
    features: [...FEATURES, 'BackendTLSPolicySANValidation'],
    manifests: ['backendtlspolicy-san.yaml'],
    cases: [
      policy('san-dns', ACCEPTED),
      served('/backendtlspolicy-san-dns'),
      policy('san-dns-mismatch', ACCEPTED),
      failed('/backendtlspolicy-san-dns-mismatch'),
      policy('san-uri', ACCEPTED),
      served('/backendtlspolicy-san-uri'),
      policy('san-uri-mismatch', ACCEPTED),
      failed('/backendtlspolicy-san-uri-mismatch'),
      policy('multiple-sans', ACCEPTED),
      served('/backendtlspolicy-multiple-sans'),
      policy('multiple-mismatch-sans', ACCEPTED),
      failed('/backendtlspolicy-multiple-mismatch-sans'),
    ],
  },
  {
    shortName: 'BackendTLSPolicyConflictResolution',
    features: FEATURES,
    manifests: ['backendtlspolicy-conflict-resolution.yaml'],
    cases: [
      policy('conflicted-without-section-name-1', ACCEPTED),
      policy('conflicted-without-section-name-2', CONFLICTED),
      served('/backendtlspolicy-conflicted-without-section-name', 'other.example.com'),
      policy('conflicted-with-section-name-1', ACCEPTED),
      policy('conflicted-with-section-name-2', CONFLICTED),
      served('/backendtlspolicy-conflicted-with-section-name', 'other.example.com'),
      policy('not-conflicted-with-section-name', ACCEPTED),
      policy('not-conflicted-without-section-name', ACCEPTED),
      served('/backendtlspolicy-not-conflicted-with-section-name', 'other.example.com'),
      served('/backendtlspolicy-not-conflicted-without-section-name'),
    ],
  },
  {
    shortName: 'BackendTLSPolicyInvalidCACertificateRef',
    features: FEATURES,
    manifests: ['backendtlspolicy-invalid-ca-certificate-ref.yaml'],
    cases: ['nonexistent-ca-certificate-ref', 'malformed-ca-certificate-ref'].flatMap((name) => [
      policy(name, NO_VALID_CA),
      policy(name, { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCACertificateRef' }),
      failed(`/backendtlspolicy-${name}`),
    ]),
  },
  {
    shortName: 'BackendTLSPolicyInvalidKind',
    features: FEATURES,
    manifests: ['backendtlspolicy-invalid-kind.yaml'],
    cases: [
      policy('invalid-kind', NO_VALID_CA),
      policy('invalid-kind', { type: 'ResolvedRefs', status: 'False', reason: 'InvalidKind' }),
      failed('/backendtlspolicy-invalid-kind'),
    ],
  },
  {
    shortName: 'BackendTLSPolicyObservedGenerationBump',
    features: FEATURES,
    manifests: ['backendtlspolicy-observed-generation-bump.yaml'],
    cases: [
      { status: { ...policy('observed-generation-bump', ACCEPTED).status, observedGeneration: 1 } },
      {
        apply: {
          file: 'backendtlspolicy-observed-generation-bump.yaml',
          manifest: 'backendtlspolicy-observed-generation-bump-patched.yaml',
        },
        status: { ...policy('observed-generation-bump', ACCEPTED).status, observedGeneration: 2 },
      },
    ],
  },
  {
    shortName: 'BackendTLSPolicyGRPCRoute',
    features: ['Gateway', 'GRPCRoute', 'BackendTLSPolicy'],
    manifests: ['backendtlspolicy-grpcroute.yaml'],
    gateway: 'same-namespace-grpc',
    ports: [9533],
    cases: [
      policyOn('same-namespace-grpc', 'grpc-normative-test', ACCEPTED, RESOLVED),
      {
        grpc: { method: 'Echo', authority: 'grpc-tls.example.com' },
        answered: { backend: 'grpc-infra-backend-v1' },
      },
      policyOn('same-namespace-grpc', 'grpc-host-mismatch', ACCEPTED, RESOLVED),
      { grpc: { method: 'EchoStream', authority: 'grpc-tls.example.com' }, failed: true },
      policyOn('same-namespace-grpc', 'grpc-cert-mismatch', ACCEPTED, RESOLVED),
      { grpc: { method: 'Echo', authority: 'cert-mismatch.example.com' }, failed: true },
    ],
  },
];
