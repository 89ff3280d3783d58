// HTTPS listeners: TLS terminated by Envoy. One filter chain per Gateway listener hostname,
// chosen by SNI (`filter_chain_match.server_names`), each presenting that listener's
// certificates; ALPN offers h2 and http/1.1; TLS 1.2 is the minimum. A listener whose Gateway
// validates client certificates (spec.tls.frontend) asks for one and checks it against the CA:
// AllowValidOnly requires a valid one, AllowInsecureFallback asks and accepts any (or none),
// leaving the decision to the backend. Certificates are SDS
// secrets: static in a printed bootstrap, or files Envoy watches (file-resources.ts), so a
// changed Secret reaches Envoy without touching the listener.
import type { TableClientValidation, TableListener } from '../policy/policy-table.js';
import type { TlsMaterial } from '../policy/tls-material.js';
import { TYPE_DOWNSTREAM_TLS } from './envoy-names.js';

import type { Json } from '../json.js';

/** Where a listener finds its certificates: static secrets in the bootstrap, or over SDS (files or ADS). */
export type SecretSource =
  { readonly kind: 'static' } | { readonly kind: 'sds'; readonly source: (secretName: string) => Json };

export interface ListenerTls {
  readonly material: TlsMaterial;
  readonly source: SecretSource;
}

export const NO_TLS: ListenerTls = { material: { certificates: {} }, source: { kind: 'static' } };

export const TLS_INSPECTOR: Json = {
  name: 'envoy.filters.listener.tls_inspector',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
  },
};

/** The SDS Secret resource of one certificate (what a secret file or static_resources holds). */
export function secretResource(id: string, tls: TlsMaterial): Json | undefined {
  const pair = tls.certificates[id];
  if (!pair) return undefined;
  return {
    name: id,
    tls_certificate: {
      certificate_chain: { inline_string: pair.certificateChain },
      private_key: { inline_string: pair.privateKey },
    },
  };
}

/** The validation context of client certificates: the CA, and whether an untrusted one may pass. */
function clientValidationContext(v: TableClientValidation): Json {
  return {
    trusted_ca: { inline_string: v.caCertificates },
    ...(v.mode === 'AllowInsecureFallback' ? { trust_chain_verification: 'ACCEPT_UNTRUSTED' } : {}),
  };
}

/** How a TLS context names one SDS secret: by name alone (static) or with where to fetch it. */
export function sdsSecretConfig(name: string, source: SecretSource): Json {
  return source.kind === 'sds' ? { name, sds_config: source.source(name) } : { name };
}

function downstreamTls(
  certificates: readonly string[],
  source: SecretSource,
  clientValidation: TableClientValidation | undefined,
): Json {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': TYPE_DOWNSTREAM_TLS,
      ...(clientValidation?.mode === 'AllowValidOnly' ? { require_client_certificate: true } : {}),
      common_tls_context: {
        ...(clientValidation ? { validation_context: clientValidationContext(clientValidation) } : {}),
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        alpn_protocols: ['h2', 'http/1.1'],
        tls_certificate_sds_secret_configs: certificates.map((name) => sdsSecretConfig(name, source)),
      },
    },
  };
}

/**
 * The filter chains of one HTTPS port: one per distinct listener hostname (a listener
 * without one serves any SNI), each with the connection manager `network` makes for it.
 */
export function httpsFilterChains(
  listeners: readonly TableListener[],
  network: (listener: TableListener) => Json,
  source: SecretSource,
  warnings: Set<string>,
): Json[] {
  const chains: Json[] = [];
  const seen = new Map<string, TableListener>();
  for (const l of listeners) {
    const certificates = l.tls?.certificates ?? [];
    if (certificates.length === 0) continue;
    const key = l.hostname ?? '';
    const first = seen.get(key);
    if (first) {
      warnings.add(
        `${l.id}: port ${l.port} already serves ${l.hostname ?? 'any hostname'} with the certificates of ${first.id}; this listener's certificates are not used`,
      );
      continue;
    }
    seen.set(key, l);
    chains.push({
      name: l.id,
      ...(l.hostname !== undefined ? { filter_chain_match: { server_names: [l.hostname] } } : {}),
      transport_socket: downstreamTls(certificates, source, l.tls?.clientValidation),
      filters: [network(l)],
    });
  }
  return chains;
}
