// Shared route fields: parentRefs, hostnames, backendRefs (CommonRouteSpec, BackendRef).
import type { FieldPath } from '../diagnostic.js';
import { type Fields, type Rec, exact } from '../fields.js';
import type { BackendRef, ParentRef } from '../model.js';
import { decodeFilters } from './route-filters.js';
import { GATEWAY_GROUP, GROUP, HOSTNAME, KIND, NAMESPACE, SECTION_NAME } from '../patterns.js';

/** What every reference names, in this order: name, group, kind, namespace (with the defaults of its kind). */
function refTarget(
  ref: Rec,
  at: FieldPath,
  f: Fields,
  defaults: { readonly group: string; readonly kind: string; readonly namespace: string },
): { name: string | undefined; target: { group: string; kind: string; namespace: string } } {
  const name = f.str(ref, 'name', at, { required: true, minLength: 1, maxLength: 253 });
  const group = f.str(ref, 'group', at, { maxLength: 253, pattern: GROUP }) ?? defaults.group;
  const kind = f.str(ref, 'kind', at, { minLength: 1, maxLength: 63, pattern: KIND }) ?? defaults.kind;
  const namespace =
    f.str(ref, 'namespace', at, { minLength: 1, maxLength: 63, pattern: NAMESPACE }) ?? defaults.namespace;
  return { name, target: { group, kind, namespace } };
}

export function decodeParentRefs(
  spec: Rec,
  path: FieldPath,
  f: Fields,
  namespace: string,
): readonly ParentRef[] {
  const out: ParentRef[] = [];
  for (const [ref, i] of f.recs(spec, 'parentRefs', path, { max: 32 })) {
    const at = [...path, 'parentRefs', i];
    f.known(ref, at, ['group', 'kind', 'namespace', 'name', 'sectionName', 'port']);
    const { name, target } = refTarget(ref, at, f, { group: GATEWAY_GROUP, kind: 'Gateway', namespace });
    const sectionName = f.str(ref, 'sectionName', at, {
      minLength: 1,
      maxLength: 253,
      pattern: SECTION_NAME,
    });
    const port = f.int(ref, 'port', at, { min: 1, max: 65535 });
    if (name === undefined) continue;
    out.push({
      index: i,
      ...target,
      name,
      ...(sectionName !== undefined ? { sectionName } : {}),
      ...(port !== undefined ? { port } : {}),
    });
  }
  // CEL: sectionName/port combinations of parentRefs must be unique.
  const seen = new Set<string>();
  for (const p of out) {
    const key = `${p.group}/${p.kind}/${p.namespace}/${p.name}/${p.sectionName ?? ''}/${p.port ?? ''}`;
    if (seen.has(key)) {
      f.add(
        [...path, 'parentRefs', p.index],
        'rule-violation',
        'sectionName or port must be specified when parentRefs includes 2 or more references to the same parent',
      );
    }
    seen.add(key);
  }
  return exact(out);
}

export function decodeHostnames(spec: Rec, path: FieldPath, f: Fields): readonly string[] {
  const out: string[] = [];
  f.list(spec, 'hostnames', path, { max: 16 }).forEach((h, i) => {
    const v = f.checkStr(h, [...path, 'hostnames', i], { minLength: 1, maxLength: 253, pattern: HOSTNAME });
    if (v !== undefined) out.push(v);
  });
  return exact(out);
}

export function decodeBackendRefs(
  rule: Rec,
  path: FieldPath,
  f: Fields,
  namespace: string,
  grpc: boolean,
): readonly BackendRef[] {
  const out: BackendRef[] = [];
  for (const [ref, i] of f.recs(rule, 'backendRefs', path, { max: 16 })) {
    const at = [...path, 'backendRefs', i];
    f.known(ref, at, ['group', 'kind', 'namespace', 'name', 'port', 'weight', 'filters']);
    const { name, target } = refTarget(ref, at, f, { group: '', kind: 'Service', namespace });
    const port = f.int(ref, 'port', at, { min: 1, max: 65535 });
    const weight = f.int(ref, 'weight', at, { min: 0, max: 1_000_000 }) ?? 1;
    if (target.group === '' && target.kind === 'Service' && ref.port === undefined) {
      f.add(at, 'rule-violation', 'Must have port for Service reference');
    }
    const filters = decodeFilters(ref, at, f, grpc, namespace);
    if (name === undefined) continue;
    out.push({
      index: i,
      ...target,
      name,
      ...(port !== undefined ? { port } : {}),
      weight,
      filters,
    });
  }
  return exact(out);
}
