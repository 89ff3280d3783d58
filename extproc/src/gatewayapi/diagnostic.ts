// A problem a user can meet, located in their files: code, file:line, object and field.
import type { DiagnosticCode } from './codes.js';

/** A field path as keys and indexes, e.g. ['spec', 'rules', 1, 'retry', 'codes', 0]. */
export type FieldPath = readonly (string | number)[];

export interface Source {
  /** Path relative to the configuration root the user gave; empty when the provider has no file. */
  readonly file: string;
  /** 1-based line; 0 when unknown. */
  readonly line: number;
}

/** Where an object came from when its provider did not say (an object read from a cluster). */
export const NO_SOURCE: Source = { file: '', line: 0 };

export function hasSource(s: Source): boolean {
  return s.file !== '';
}

export interface ObjectRef {
  readonly kind: string;
  /** Empty for cluster-scoped kinds (GatewayClass). */
  readonly namespace: string;
  readonly name: string;
}

export interface Diagnostic extends Source {
  readonly code: DiagnosticCode;
  readonly object?: ObjectRef;
  /** `spec.rules[1].retry.codes[0]`; empty for the whole object or file. */
  readonly field: string;
  readonly message: string;
}

/**
 * File-level problems that make a configuration unusable as a whole: a half-saved file or an
 * unreadable path must not drop the routes it holds, so a reload with one of these keeps the
 * last good configuration, and a first load with one is not ready.
 */
const FATAL_DIAGNOSTIC_CODES: ReadonlySet<string> = new Set(['yaml-syntax', 'io-error']);

export function isFatal(d: Diagnostic): boolean {
  return FATAL_DIAGNOSTIC_CODES.has(d.code);
}

/** Codes that are warnings: nothing is refused or fails closed because of them. */
const WARNING_DIAGNOSTIC_CODES: ReadonlySet<string> = new Set([
  'unknown-kind',
  'no-ready-endpoints',
  'underscore-session-header',
]);

export function isWarning(d: Pick<Diagnostic, 'code'>): boolean {
  return WARNING_DIAGNOSTIC_CODES.has(d.code);
}

/** A diagnostic as `validate --output json` and `/v1/status` show it: with its severity. */
export function diagnosticView(d: Diagnostic) {
  return {
    severity: isWarning(d) ? ('warning' as const) : ('error' as const),
    code: d.code,
    file: d.file,
    line: d.line,
    ...(d.object ? { object: d.object } : {}),
    field: d.field,
    message: d.message,
  };
}

/** `spec.rules[1].retry.codes[0]` */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

function formatObjectRef(ref: ObjectRef): string {
  return ref.namespace === '' ? `${ref.kind} ${ref.name}` : `${ref.kind} ${ref.namespace}/${ref.name}`;
}

/** `routes/shop.yaml:14 HTTPRoute default/shop spec.rules[1].retry.codes[0]: 600 is not in 400-599` */
export function formatDiagnostic(d: Diagnostic): string {
  const where = hasSource(d) ? `${d.file}:${d.line}` : '';
  const what = d.object ? `${where === '' ? '' : ' '}${formatObjectRef(d.object)}` : '';
  const field = d.field === '' ? '' : ` ${d.field}`;
  return `${where}${what}${field}: ${d.message}`;
}
