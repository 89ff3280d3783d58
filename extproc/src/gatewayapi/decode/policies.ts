// ReferenceGrant, BackendTLSPolicy, XBackendTrafficPolicy and the seed's SessionPersistencePolicy.
import type { FieldPath } from '../diagnostic.js';
import { Fields, type Rec } from '../fields.js';
import type {
  BackendTLSPolicy,
  BackendTrafficPolicy,
  LocalObjectRef,
  PolicyTargetRef,
  ReferenceGrant,
  RetryConstraintSpec,
  SessionPersistencePolicy,
  SubjectAltName,
} from '../model.js';
import type { SourceObject } from '../parse.js';
import { GROUP, HOSTNAME, KIND, NAMESPACE, PRECISE_HOSTNAME, SECTION_NAME } from '../patterns.js';
import { durationField } from './duration-field.js';
import { decodeMetadata, spec as specOf } from './metadata.js';
import { decodeSessionPersistence, decodeSessionPolicyFields } from './session-persistence.js';

export function decodeReferenceGrant(src: SourceObject): ReferenceGrant {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  const from: ReferenceGrant['from'][number][] = [];
  for (const [r, i] of f.recs(spec, 'from', ['spec'], { required: true, min: 1, max: 16 })) {
    const at = ['spec', 'from', i];
    const group = f.str(r, 'group', at, { required: true, maxLength: 253, pattern: GROUP });
    const kind = f.str(r, 'kind', at, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
    const namespace = f.str(r, 'namespace', at, {
      required: true,
      minLength: 1,
      maxLength: 63,
      pattern: NAMESPACE,
    });
    if (group !== undefined && kind !== undefined && namespace !== undefined)
      from.push({ group, kind, namespace });
  }
  const to: ReferenceGrant['to'][number][] = [];
  for (const [r, i] of f.recs(spec, 'to', ['spec'], { required: true, min: 1, max: 16 })) {
    const at = ['spec', 'to', i];
    const group = f.str(r, 'group', at, { required: true, maxLength: 253, pattern: GROUP });
    const kind = f.str(r, 'kind', at, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
    const name = f.str(r, 'name', at, { minLength: 1, maxLength: 253 });
    if (group !== undefined && kind !== undefined)
      to.push({ group, kind, ...(name !== undefined ? { name } : {}) });
  }
  return { ...meta, kind: 'ReferenceGrant', from, to, errors: f.errors };
}

function targetRef(
  r: Rec,
  at: FieldPath,
  i: number,
  f: Fields,
  sections: boolean,
): PolicyTargetRef | undefined {
  f.known(r, at, sections ? ['group', 'kind', 'name', 'sectionName'] : ['group', 'kind', 'name']);
  const group = f.str(r, 'group', at, { required: true, maxLength: 253, pattern: GROUP });
  const kind = f.str(r, 'kind', at, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
  const name = f.str(r, 'name', at, { required: true, minLength: 1, maxLength: 253 });
  const sectionName = sections
    ? f.str(r, 'sectionName', at, { minLength: 1, maxLength: 253, pattern: SECTION_NAME })
    : undefined;
  if (group === undefined || kind === undefined || name === undefined) return undefined;
  return { index: i, group, kind, name, ...(sectionName !== undefined ? { sectionName } : {}) };
}

function targetRefs(spec: Rec, f: Fields, sections: boolean): PolicyTargetRef[] {
  const out: PolicyTargetRef[] = [];
  for (const [r, i] of f.recs(spec, 'targetRefs', ['spec'], { required: true, min: 1, max: 16 })) {
    const t = targetRef(r, ['spec', 'targetRefs', i], i, f, sections);
    if (t) out.push(t);
  }
  return out;
}

/** Long on purpose: field after field in the schema's order, each with its CEL rules. */
export function decodeBackendTlsPolicy(src: SourceObject): BackendTLSPolicy {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  f.known(spec, ['spec'], ['targetRefs', 'validation', 'options']);
  const refs = targetRefs(spec, f, true);
  const validation = f.rec(spec, 'validation', ['spec'], true) ?? {};
  const vat = ['spec', 'validation'];
  f.known(validation, vat, ['caCertificateRefs', 'wellKnownCACertificates', 'hostname', 'subjectAltNames']);
  const hostname = f.str(validation, 'hostname', vat, {
    required: true,
    minLength: 1,
    maxLength: 253,
    pattern: PRECISE_HOSTNAME,
  });
  const caCertificateRefs: LocalObjectRef[] = [];
  for (const [r, i] of f.recs(validation, 'caCertificateRefs', vat, { max: 8 })) {
    const at = [...vat, 'caCertificateRefs', i];
    f.known(r, at, ['group', 'kind', 'name']);
    const group = f.str(r, 'group', at, { required: true, maxLength: 253, pattern: GROUP });
    const kind = f.str(r, 'kind', at, { required: true, minLength: 1, maxLength: 63, pattern: KIND });
    const name = f.str(r, 'name', at, { required: true, minLength: 1, maxLength: 253 });
    if (group !== undefined && kind !== undefined && name !== undefined)
      caCertificateRefs.push({ index: i, group, kind, name });
  }
  const wellKnown = f.str(validation, 'wellKnownCACertificates', vat, { enum: ['System'] }) as
    'System' | undefined;
  const hasCa = Array.isArray(validation.caCertificateRefs) && validation.caCertificateRefs.length > 0;
  const hasWellKnown = validation.wellKnownCACertificates !== undefined;
  if (hasCa && hasWellKnown)
    f.add(vat, 'rule-violation', 'must not contain both CACertificateRefs and WellKnownCACertificates');
  if (!hasCa && !hasWellKnown)
    f.add(vat, 'rule-violation', 'must specify either CACertificateRefs or WellKnownCACertificates');
  const subjectAltNames: SubjectAltName[] = [];
  for (const [r, i] of f.recs(validation, 'subjectAltNames', vat, { max: 5 })) {
    const at = [...vat, 'subjectAltNames', i];
    f.known(r, at, ['type', 'hostname', 'uri']);
    const type = f.str(r, 'type', at, { required: true, enum: ['Hostname', 'URI'] }) as
      'Hostname' | 'URI' | undefined;
    const host = f.str(r, 'hostname', at, { minLength: 1, maxLength: 253, pattern: HOSTNAME });
    const uri = f.str(r, 'uri', at, { minLength: 1, maxLength: 253 });
    if (type === 'Hostname' && host === undefined && r.hostname === undefined)
      f.add(at, 'rule-violation', 'SubjectAltName element must contain Hostname, if Type is set to Hostname');
    if (type === 'Hostname' && r.uri !== undefined)
      f.add(at, 'rule-violation', 'SubjectAltName element must not contain URI, if Type is set to Hostname');
    if (type === 'URI' && uri === undefined && r.uri === undefined)
      f.add(at, 'rule-violation', 'SubjectAltName element must contain URI, if Type is set to URI');
    if (type === 'URI' && r.hostname !== undefined)
      f.add(at, 'rule-violation', 'SubjectAltName element must not contain Hostname, if Type is set to URI');
    if (type === 'Hostname' && host !== undefined) subjectAltNames.push({ type, value: host });
    if (type === 'URI' && uri !== undefined) subjectAltNames.push({ type, value: uri });
  }
  return {
    ...meta,
    kind: 'BackendTLSPolicy',
    targetRefs: refs,
    ...(hostname ? { hostname } : {}),
    caCertificateRefs,
    ...(wellKnown ? { wellKnownCACertificates: wellKnown } : {}),
    subjectAltNames,
    errors: f.errors,
  };
}

function decodeRetryConstraint(spec: Rec, f: Fields): RetryConstraintSpec | undefined {
  const rc = f.rec(spec, 'retryConstraint', ['spec']);
  if (!rc) return undefined;
  const at = ['spec', 'retryConstraint'];
  f.known(rc, at, ['budget', 'minRetryRate']);
  const budget = f.rec(rc, 'budget', at) ?? {};
  const bat = [...at, 'budget'];
  const budgetPercent = f.int(budget, 'percent', bat, { min: 0, max: 100 }) ?? 20;
  const budgetIntervalMs = durationField(budget, 'interval', bat, f) ?? 10_000;
  if (budgetIntervalMs < 1000 || budgetIntervalMs > 3_600_000) {
    f.add(
      [...bat, 'interval'],
      'rule-violation',
      'interval cannot be greater than one hour or less than one second',
    );
  }
  const rate = f.rec(rc, 'minRetryRate', at) ?? {};
  const rat = [...at, 'minRetryRate'];
  const minRetryCount = f.int(rate, 'count', rat, { min: 1, max: 1_000_000 }) ?? 10;
  const minRetryIntervalMs = durationField(rate, 'interval', rat, f) ?? 1000;
  if (minRetryIntervalMs < 1000 || minRetryIntervalMs > 3_600_000) {
    f.add(
      [...rat, 'interval'],
      'rule-violation',
      'interval cannot be greater than one hour or less than one second',
    );
  }
  return { budgetPercent, budgetIntervalMs, minRetryCount, minRetryIntervalMs };
}

export function decodeBackendTrafficPolicy(src: SourceObject): BackendTrafficPolicy {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  f.known(spec, ['spec'], ['targetRefs', 'retryConstraint', 'sessionPersistence']);
  const refs = targetRefs(spec, f, false);
  const retryConstraint = decodeRetryConstraint(spec, f);
  const sp = f.rec(spec, 'sessionPersistence', ['spec']);
  const session = sp ? decodeSessionPersistence(sp, ['spec', 'sessionPersistence'], f) : undefined;
  return {
    ...meta,
    kind: 'XBackendTrafficPolicy',
    targetRefs: refs,
    ...(retryConstraint ? { retryConstraint } : {}),
    ...(session ? { session } : {}),
    errors: f.errors,
  };
}

/** The seed's SessionPersistencePolicy: one `targetRef` (a `targetRefs` list is accepted too). */
export function decodeSessionPersistencePolicy(src: SourceObject): SessionPersistencePolicy {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const spec = specOf(src, f);
  f.known(
    spec,
    ['spec'],
    ['targetRef', 'targetRefs', 'absoluteTimeoutSeconds', 'idleTimeoutSeconds', 'sessionName', 'type'],
  );
  let refs: PolicyTargetRef[] = [];
  if (spec.targetRefs !== undefined) {
    refs = targetRefs(spec, f, true);
  } else {
    const r = f.rec(spec, 'targetRef', ['spec'], true);
    const t = r ? targetRef(r, ['spec', 'targetRef'], 0, f, true) : undefined;
    if (t) refs = [t];
  }
  const session = decodeSessionPolicyFields(spec, ['spec'], f);
  return {
    ...meta,
    kind: 'SessionPersistencePolicy',
    targetRefs: refs,
    ...(session ? { session } : {}),
    errors: f.errors,
  };
}
