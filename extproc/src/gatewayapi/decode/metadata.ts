// metadata: name, namespace, labels, creationTimestamp, generation.
import { type Fields, type Rec, isRec } from '../fields.js';
import type { ModelObject } from '../model.js';
import type { SourceObject } from '../parse.js';
import { DNS_LABEL, DNS_SUBDOMAIN } from '../patterns.js';

/** What every object's metadata gives its model object. */
export type Meta = Omit<ModelObject, 'kind' | 'errors'>;

export function decodeMetadata(src: SourceObject, f: Fields): Meta {
  const meta = f.rec(src.body, 'metadata', [], true) ?? {};
  f.str(meta, 'name', ['metadata'], { required: true, minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
  f.str(meta, 'namespace', ['metadata'], { maxLength: 63, pattern: DNS_LABEL });
  const labels: Record<string, string> = {};
  const rawLabels = meta.labels;
  if (isRec(rawLabels)) {
    for (const [k, v] of Object.entries(rawLabels)) if (typeof v === 'string') labels[k] = v;
  }
  const ts = meta.creationTimestamp;
  const creationTimestamp = typeof ts === 'string' ? ts : ts instanceof Date ? ts.toISOString() : undefined;
  const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
  return {
    apiVersion: src.apiVersion,
    namespace: src.namespace,
    name: src.name,
    ...(creationTimestamp !== undefined ? { creationTimestamp } : {}),
    ...(generation !== undefined ? { generation } : {}),
    labels,
    origin: src,
  };
}

export function spec(src: SourceObject, f: Fields, required = true): Rec {
  return f.rec(src.body, 'spec', [], required) ?? {};
}
