// GatewayClass and Gateway (v1, v1beta1).
import { Fields, type Rec, isRec } from '../fields.js';
import type {
  Gateway,
  GatewayClass,
  LabelSelector,
  Listener,
  ListenerTls,
  RouteGroupKind,
  SecretObjectRef,
} from '../model.js';
import type { SourceObject } from '../parse.js';
import {
  CONTROLLER,
  GATEWAY_GROUP,
  GROUP,
  HOSTNAME,
  KIND,
  NAMESPACE,
  PROTOCOL,
  SECTION_NAME,
} from '../patterns.js';
import { decodeGatewayTls } from './gateway-tls.js';
import { decodeMetadata, spec as specOf } from './metadata.js';
import type { FieldPath } from '../diagnostic.js';

export function decodeGatewayClass(src: SourceObject): GatewayClass {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  const controllerName = f.str(spec, 'controllerName', ['spec'], {
    required: true,
    minLength: 1,
    maxLength: 253,
    pattern: CONTROLLER,
  });
  // Cluster-scoped: no namespace.
  return {
    ...meta,
    namespace: '',
    kind: 'GatewayClass',
    ...(controllerName ? { controllerName } : {}),
    errors: f.errors,
  };
}

function decodeLabelSelector(sel: Rec, at: FieldPath, f: Fields): LabelSelector {
  const matchLabels: Record<string, string> = {};
  const ml = f.rec(sel, 'matchLabels', at);
  if (ml) for (const [k, v] of Object.entries(ml)) if (typeof v === 'string') matchLabels[k] = v;
  const matchExpressions: LabelSelector['matchExpressions'][number][] = [];
  for (const [e, i] of f.recs(sel, 'matchExpressions', at)) {
    const eat = [...at, 'matchExpressions', i];
    const key = f.str(e, 'key', eat, { required: true });
    const operator = f.str(e, 'operator', eat, {
      required: true,
      enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
    });
    const values = f.list(e, 'values', eat).filter((v): v is string => typeof v === 'string');
    if (key !== undefined && operator !== undefined) matchExpressions.push({ key, operator, values });
  }
  return { matchLabels, matchExpressions };
}

function decodeListenerTls(
  tls: Rec,
  at: FieldPath,
  gatewayNamespace: string,
  f: Fields,
): ListenerTls & { frontendValidation: boolean } {
  f.known(tls, at, ['mode', 'certificateRefs', 'options', 'frontendValidation']);
  const mode = (f.str(tls, 'mode', at, { enum: ['Terminate', 'Passthrough'] }) ?? 'Terminate') as
    'Terminate' | 'Passthrough';
  const certificateRefs: SecretObjectRef[] = [];
  for (const [r, j] of f.recs(tls, 'certificateRefs', at, { max: 64 })) {
    const rat = [...at, 'certificateRefs', j];
    f.known(r, rat, ['group', 'kind', 'name', 'namespace']);
    const group = f.str(r, 'group', rat, { maxLength: 253, pattern: GROUP }) ?? '';
    const kind = f.str(r, 'kind', rat, { minLength: 1, maxLength: 63, pattern: KIND }) ?? 'Secret';
    const name = f.str(r, 'name', rat, { required: true, minLength: 1, maxLength: 253 });
    const namespace = f.str(r, 'namespace', rat, { minLength: 1, maxLength: 63, pattern: NAMESPACE });
    if (name !== undefined)
      certificateRefs.push({ index: j, group, kind, name, namespace: namespace ?? gatewayNamespace });
  }
  const options = f.rec(tls, 'options', at);
  if (mode === 'Terminate' && certificateRefs.length === 0 && !(options && Object.keys(options).length > 0)) {
    f.add(at, 'rule-violation', 'certificateRefs or options must be specified when mode is Terminate');
  }
  return { mode, certificateRefs, frontendValidation: tls.frontendValidation != null };
}

/** Long on purpose: field after field in the schema's order, each with its CEL rules. */
function decodeListener(l: Rec, i: number, gatewayNamespace: string, f: Fields): Listener | undefined {
  const at = ['spec', 'listeners', i];
  f.known(l, at, ['name', 'hostname', 'port', 'protocol', 'tls', 'allowedRoutes']);
  const name = f.str(l, 'name', at, { required: true, minLength: 1, maxLength: 253, pattern: SECTION_NAME });
  const hostname = f.str(l, 'hostname', at, { minLength: 1, maxLength: 253, pattern: HOSTNAME });
  const port = f.int(l, 'port', at, { required: true, min: 1, max: 65535 });
  const protocol = f.str(l, 'protocol', at, {
    required: true,
    minLength: 1,
    maxLength: 255,
    pattern: PROTOCOL,
  });
  const hasTls = isRec(l.tls);
  if (protocol && ['HTTP', 'TCP', 'UDP'].includes(protocol) && hasTls) {
    f.add([...at, 'tls'], 'rule-violation', "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']");
  }
  if (protocol && ['HTTPS', 'TLS'].includes(protocol) && !hasTls) {
    f.add([...at, 'tls'], 'rule-violation', "tls mode must be set for protocols ['HTTPS', 'TLS']");
  }
  const tlsRec = f.rec(l, 'tls', at);
  const tls = tlsRec ? decodeListenerTls(tlsRec, [...at, 'tls'], gatewayNamespace, f) : undefined;
  if (protocol && ['TCP', 'UDP'].includes(protocol) && hostname !== undefined) {
    f.add(
      [...at, 'hostname'],
      'rule-violation',
      "hostname must not be specified for protocols ['TCP', 'UDP']",
    );
  }
  let allowedNamespaces: Listener['allowedNamespaces'] = { from: 'Same' };
  let allowedKinds: RouteGroupKind[] | undefined;
  const ar = f.rec(l, 'allowedRoutes', at);
  if (ar) {
    const aat = [...at, 'allowedRoutes'];
    f.known(ar, aat, ['namespaces', 'kinds']);
    const ns = f.rec(ar, 'namespaces', aat);
    if (ns) {
      const nat = [...aat, 'namespaces'];
      const from = (f.str(ns, 'from', nat, { enum: ['All', 'Selector', 'Same'] }) ?? 'Same') as
        'All' | 'Selector' | 'Same';
      const sel = f.rec(ns, 'selector', nat);
      if (from === 'Selector' && !sel)
        f.add(nat, 'rule-violation', 'selector must be specified when from is Selector');
      allowedNamespaces = {
        from,
        ...(sel ? { selector: decodeLabelSelector(sel, [...nat, 'selector'], f) } : {}),
      };
    }
    if (ar.kinds !== undefined) {
      allowedKinds = [];
      for (const [k, j] of f.recs(ar, 'kinds', aat, { max: 8 })) {
        const kat = [...aat, 'kinds', j];
        const group = f.str(k, 'group', kat, { maxLength: 253, pattern: GROUP }) ?? GATEWAY_GROUP;
        const kind = f.str(k, 'kind', kat, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
        if (kind !== undefined) allowedKinds.push({ group, kind });
      }
    }
  }
  if (name === undefined || port === undefined || protocol === undefined) return undefined;
  return {
    index: i,
    name,
    ...(hostname !== undefined ? { hostname } : {}),
    port,
    protocol,
    hasTls,
    ...(tls ? { tls: { mode: tls.mode, certificateRefs: tls.certificateRefs } } : {}),
    ...(tls?.frontendValidation ? { frontendValidation: true } : {}),
    allowedNamespaces,
    ...(allowedKinds ? { allowedKinds } : {}),
  };
}

/** `spec.infrastructure.parametersRef` (LocalParametersReference), when given. */
function decodeParametersRef(spec: Rec, f: Fields): Gateway['parametersRef'] {
  const at = ['spec', 'infrastructure'];
  const infrastructure = f.rec(spec, 'infrastructure', ['spec']);
  const ref = infrastructure && f.rec(infrastructure, 'parametersRef', at);
  if (!ref) return undefined;
  const rat = [...at, 'parametersRef'];
  f.known(ref, rat, ['group', 'kind', 'name']);
  const group = f.str(ref, 'group', rat, { required: true, maxLength: 253, pattern: GROUP });
  const kind = f.str(ref, 'kind', rat, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
  const name = f.str(ref, 'name', rat, { required: true, minLength: 1, maxLength: 253 });
  return group !== undefined && kind !== undefined && name !== undefined ? { group, kind, name } : undefined;
}

export function decodeGateway(src: SourceObject): Gateway {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  const gatewayClassName =
    f.str(spec, 'gatewayClassName', ['spec'], { required: true, minLength: 1, maxLength: 253 }) ?? '';
  const listeners: Listener[] = [];
  for (const [l, i] of f.recs(spec, 'listeners', ['spec'], { required: true, min: 1, max: 64 })) {
    const listener = decodeListener(l, i, meta.namespace, f);
    if (listener) listeners.push(listener);
  }
  for (const l of listeners) {
    if (listeners.filter((o) => o.name === l.name).length > 1) {
      f.add(
        ['spec', 'listeners', l.index, 'name'],
        'rule-violation',
        'Listener name must be unique within the Gateway',
      );
    }
    if (
      listeners.filter((o) => o.port === l.port && o.protocol === l.protocol && o.hostname === l.hostname)
        .length > 1
    ) {
      f.add(
        ['spec', 'listeners', l.index],
        'rule-violation',
        'Combination of port, protocol and hostname must be unique for each listener',
      );
    }
  }
  const parametersRef = decodeParametersRef(spec, f);
  const tls = decodeGatewayTls(spec, meta.namespace, f);
  return {
    ...meta,
    kind: 'Gateway',
    gatewayClassName,
    listeners,
    ...(parametersRef ? { parametersRef } : {}),
    ...(tls ? { tls } : {}),
    errors: f.errors,
  };
}
