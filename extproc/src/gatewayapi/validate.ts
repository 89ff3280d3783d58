// Located objects → the typed model, checked like the API server would (schema + CEL).
// Unknown kinds are reported and ignored; duplicates keep the first object.
import type { Diagnostic } from './diagnostic.js';
import { formatFieldPath, hasSource } from './diagnostic.js';
import { KINDS } from './kinds.js';
import { flatId } from '../json.js';
import type { AnyObject, Model } from './model.js';
import type { SourceObject } from './parse.js';

export interface ValidateResult {
  readonly model: Model;
  /** Every decoded object, in input order (also the order status is reported in). */
  readonly objects: readonly AnyObject[];
  readonly diagnostics: readonly Diagnostic[];
}

function objectDiagnostics(o: AnyObject): Diagnostic[] {
  return o.errors.map((e) => ({
    code: e.code,
    file: o.origin.source.file,
    line: o.origin.lineOf(e.path),
    object: { kind: o.kind, namespace: o.namespace, name: o.name },
    field: formatFieldPath(e.path),
    message: e.message,
  }));
}

/** Decodes one object; a caller may answer from what it decoded before (pipeline/incremental-compiler.ts). */
export type DecodeObject = (src: SourceObject, decode: (src: SourceObject) => AnyObject) => AnyObject;

function whereOf(src: SourceObject): { file: string; line: number; field: string } {
  return { file: src.source.file, line: src.source.line, field: '' };
}

function unknownKind(src: SourceObject, versions: readonly string[] | undefined): Diagnostic {
  return {
    ...whereOf(src),
    code: 'unknown-kind',
    message: versions
      ? `${src.kind} ${src.apiVersion} is not read by steadfast (use ${versions.join(' or ')}); ignored`
      : `kind ${src.kind} (${src.apiVersion}) is not read by steadfast; ignored`,
  };
}

function duplicate(src: SourceObject, obj: AnyObject, first: SourceObject): Diagnostic {
  return {
    ...whereOf(src),
    code: 'duplicate-object',
    object: { kind: obj.kind, namespace: obj.namespace, name: obj.name },
    message: hasSource(first.source)
      ? `already defined at ${first.source.file}:${first.source.line}; this one is ignored`
      : 'already defined; this one is ignored',
  };
}

/** What one source adds to a validation: its key and object (unless ignored), and its diagnostics. */
export interface SourceValidation {
  /** `kind/namespace/name`; undefined for a kind steadfast does not read. */
  readonly key: string | undefined;
  /** The decoded object; undefined for an unknown kind or a duplicate. */
  readonly object: AnyObject | undefined;
  readonly diagnostics: readonly Diagnostic[];
  readonly duplicate: boolean;
}

/** The first source of each key, as far as a validation has come. */
export interface SeenKeys {
  get(key: string): SourceObject | undefined;
  set(key: string, src: SourceObject): unknown;
}

const NONE: readonly Diagnostic[] = [];

/** One source validated after the sources `seen` holds (their keys); records its key there. */
export function validateSource(
  src: SourceObject,
  decodeObject: DecodeObject,
  seen: SeenKeys,
): SourceValidation {
  // A kind is the document's own string: `toString` must not find Object.prototype's.
  const entry = Object.hasOwn(KINDS, src.kind) ? KINDS[src.kind] : undefined;
  if (!entry || !entry.versions.includes(src.apiVersion)) {
    return {
      key: undefined,
      object: undefined,
      diagnostics: [unknownKind(src, entry?.versions)],
      duplicate: false,
    };
  }
  const obj = decodeObject(src, entry.decode);
  const key = flatId(obj.kind, obj.namespace, obj.name);
  const first = seen.get(key);
  if (first) return { key, object: undefined, diagnostics: [duplicate(src, obj, first)], duplicate: true };
  seen.set(key, src);
  return {
    key,
    object: obj,
    diagnostics: obj.errors.length > 0 ? objectDiagnostics(obj) : NONE,
    duplicate: false,
  };
}

export function validateObjects(
  sources: readonly SourceObject[],
  decodeObject: DecodeObject = (src, decode) => decode(src),
): ValidateResult {
  const diagnostics: Diagnostic[] = [];
  const objects: AnyObject[] = [];
  const seen = new Map<string, SourceObject>();
  for (const src of sources) {
    const v = validateSource(src, decodeObject, seen);
    if (v.object) objects.push(v.object);
    for (const d of v.diagnostics) diagnostics.push(d);
  }
  return { model: modelOf(objects), objects, diagnostics };
}

/** The objects by kind, each list in input order: one pass, not one per kind (10,000 routes). */
export function modelOf(objects: readonly AnyObject[]): Model {
  const model = {
    gatewayClasses: [] as AnyObject[],
    gateways: [] as AnyObject[],
    routes: [] as AnyObject[],
    referenceGrants: [] as AnyObject[],
    services: [] as AnyObject[],
    endpointSlices: [] as AnyObject[],
    backendTlsPolicies: [] as AnyObject[],
    backendTrafficPolicies: [] as AnyObject[],
    sessionPolicies: [] as AnyObject[],
    namespaces: [] as AnyObject[],
    secrets: [] as AnyObject[],
    configMaps: [] as AnyObject[],
  };
  const lists: Record<AnyObject['kind'], AnyObject[]> = {
    GatewayClass: model.gatewayClasses,
    Gateway: model.gateways,
    HTTPRoute: model.routes,
    GRPCRoute: model.routes,
    ReferenceGrant: model.referenceGrants,
    Service: model.services,
    EndpointSlice: model.endpointSlices,
    BackendTLSPolicy: model.backendTlsPolicies,
    XBackendTrafficPolicy: model.backendTrafficPolicies,
    SessionPersistencePolicy: model.sessionPolicies,
    Namespace: model.namespaces,
    Secret: model.secrets,
    ConfigMap: model.configMaps,
  };
  for (const o of objects) lists[o.kind].push(o);
  return model as Model;
}
