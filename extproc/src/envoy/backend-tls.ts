// BackendTLSPolicy → the TLS transport socket of a cluster: SNI from `validation.hostname`,
// the CA certificates of `caCertificateRefs` (or the system bundle for
// `wellKnownCACertificates: System`), and the names the backend's certificate must carry:
// `subjectAltNames` when given, else the hostname ("MUST match the certificate served by the
// matching backend, unless SubjectAltNames is specified"). Envoy verifies both, so a backend
// with a certificate from another CA or for another name fails the handshake. The Gateway's
// spec.tls.backend client certificate, when the cluster has one, is presented from SDS.
import type { IrClusterTls } from '../ir/rule-clusters.js';
import { TYPE_UPSTREAM_TLS } from './envoy-names.js';
import type { ClusterProtocol } from '../ir/cluster-protocol.js';
import { type SecretSource, sdsSecretConfig } from './tls-listener.js';

import type { Json } from '../json.js';

function subjectAltNameMatchers(tls: IrClusterTls): Json[] {
  if (tls.subjectAltNames.length === 0) return [{ san_type: 'DNS', matcher: { exact: tls.hostname } }];
  return tls.subjectAltNames.map((san) => ({
    san_type: san.type === 'URI' ? 'URI' : 'DNS',
    matcher: { exact: san.value },
  }));
}

export function backendTlsTransportSocket(
  tls: IrClusterTls,
  protocol: ClusterProtocol,
  systemCaFile: string,
  secrets: SecretSource,
): Json {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': TYPE_UPSTREAM_TLS,
      sni: tls.hostname,
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        // The protocol the cluster speaks, negotiated: WebSocket upgrades are HTTP/1.1.
        alpn_protocols: [protocol === 'http2' ? 'h2' : 'http/1.1'],
        ...(tls.clientCertificate !== undefined
          ? { tls_certificate_sds_secret_configs: [sdsSecretConfig(tls.clientCertificate, secrets)] }
          : {}),
        validation_context: {
          trusted_ca:
            tls.caCertificates !== undefined
              ? { inline_string: tls.caCertificates }
              : { filename: systemCaFile },
          match_typed_subject_alt_names: subjectAltNameMatchers(tls),
        },
      },
    },
  };
}
