// Which ConfigMaps the compiler reads: those holding CA certificates that a BackendTLSPolicy
// (to check backends) or an owned Gateway's spec.tls.frontend (to check clients) names. The
// rest (leader-election and other busy ConfigMaps) compile nothing, so their changes are ignored.
import type { KubeObject } from './reflector.js';

interface CaRef {
  readonly group?: unknown;
  readonly kind?: unknown;
  readonly name?: unknown;
  readonly namespace?: unknown;
}

interface FrontendTls {
  readonly default?: { readonly validation?: { readonly caCertificateRefs?: unknown } };
  readonly perPort?: unknown;
}

const refsOf = (value: unknown): CaRef[] =>
  Array.isArray(value)
    ? (value as unknown[]).filter((r): r is CaRef => typeof r === 'object' && r !== null)
    : [];

/** The CA references of a Gateway's client-certificate validation: the default's and every port's. */
function frontendCaRefs(gateway: KubeObject): CaRef[] {
  const frontend = (gateway.spec as { tls?: { frontend?: FrontendTls } } | undefined)?.tls?.frontend;
  if (typeof frontend !== 'object' || frontend === null) return [];
  const refs = refsOf(frontend.default?.validation?.caCertificateRefs);
  for (const port of Array.isArray(frontend.perPort) ? (frontend.perPort as unknown[]) : []) {
    const validation = (port as { tls?: { validation?: { caCertificateRefs?: unknown } } } | null)?.tls
      ?.validation;
    refs.push(...refsOf(validation?.caCertificateRefs));
  }
  return refs;
}

/**
 * A BackendTLSPolicy in the ConfigMap's namespace names it, or one of `gateways` (those
 * steadfast owns) does, in the ref's namespace or, without one, the Gateway's own.
 */
export function caConfigMapNamed(
  cm: KubeObject,
  policies: Iterable<KubeObject>,
  gateways: Iterable<KubeObject>,
): boolean {
  const ns = cm.metadata?.namespace ?? '';
  const name = cm.metadata?.name ?? '';
  for (const p of policies) {
    if (p.metadata?.namespace !== ns) continue;
    const refs = (p.spec as { validation?: { caCertificateRefs?: unknown } } | undefined)?.validation
      ?.caCertificateRefs;
    if (refsOf(refs).some((r) => r.kind === 'ConfigMap' && r.name === name)) return true;
  }
  for (const gw of gateways) {
    const home = gw.metadata?.namespace ?? '';
    const named = (r: CaRef) =>
      r.kind === 'ConfigMap' &&
      (r.group ?? '') === '' &&
      r.name === name &&
      (typeof r.namespace === 'string' && r.namespace !== '' ? r.namespace : home) === ns;
    if (frontendCaRefs(gw).some(named)) return true;
  }
  return false;
}
