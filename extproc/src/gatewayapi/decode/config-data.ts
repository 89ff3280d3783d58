// core/v1 Secret and ConfigMap: the certificates and keys of HTTPS listeners (Secrets of
// type kubernetes.io/tls) and the CA bundles of BackendTLSPolicy (ConfigMaps with ca.crt).
// Values are key material: no message ever quotes one.
import { Fields, type Rec, isRec } from '../fields.js';
import type { ConfigMap, DataValue, Secret } from '../model.js';
import type { SourceObject } from '../parse.js';
import { decodeMetadata } from './metadata.js';

export const SECRET_TYPE_TLS = 'kubernetes.io/tls';
/** A data key: alphanumerics, `-`, `_` and `.` (the API server's rule). */
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function values(
  body: Rec,
  field: 'data' | 'stringData',
  base64: boolean,
  f: Fields,
  into: Record<string, DataValue>,
): void {
  const raw = body[field];
  if (raw === undefined || raw === null) return;
  if (!isRec(raw)) {
    f.add([field], 'wrong-type', 'must be a map of strings');
    return;
  }
  for (const [key, v] of Object.entries(raw)) {
    const at = [field, key];
    if (!DATA_KEY.test(key)) {
      f.add(at, 'bad-format', 'a data key must consist of alphanumerics, "-", "_" or "."');
      continue;
    }
    if (typeof v !== 'string') {
      f.add(at, 'wrong-type', `must be a string, got a ${v === null ? 'null' : typeof v}`);
      continue;
    }
    if (base64 && !BASE64.test(v)) {
      f.add(at, 'bad-format', 'is not valid base64 (standard alphabet, padded, no line breaks)');
      continue;
    }
    // stringData wins over data for the same key, as the API server merges them.
    into[key] = { value: base64 ? Buffer.from(v, 'base64').toString('utf8') : v, from: field };
  }
}

export function decodeSecret(src: SourceObject): Secret {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const body = src.body;
  f.known(body, [], ['apiVersion', 'kind', 'metadata', 'type', 'data', 'stringData', 'immutable']);
  const type = f.str(body, 'type', [], { maxLength: 253 }) ?? 'Opaque';
  const data: Record<string, DataValue> = {};
  values(body, 'data', true, f, data);
  values(body, 'stringData', false, f, data);
  if (type === SECRET_TYPE_TLS) {
    const given = (field: string, key: string) => isRec(body[field]) && (body[field] as Rec)[key] != null;
    for (const key of ['tls.crt', 'tls.key']) {
      if (!given('data', key) && !given('stringData', key))
        f.add(['data', key], 'missing-field', `Required value for type ${type}`);
    }
  }
  return { ...meta, kind: 'Secret', type, data, errors: f.errors };
}

export function decodeConfigMap(src: SourceObject): ConfigMap {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const body = src.body;
  f.known(body, [], ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable']);
  const data: Record<string, DataValue> = {};
  values(body, 'data', false, f, data);
  return { ...meta, kind: 'ConfigMap', data, errors: f.errors };
}
