// A small schema reader: walks untyped YAML data along a field path, checks it the way the
// API server's OpenAPI schema would, and collects located field errors instead of throwing.
import type { DiagnosticCode } from './codes.js';
import type { FieldPath } from './diagnostic.js';
import { NO_ITEMS } from '../json.js';

// The decoders' lists are kept for as long as their object: grown by push, each is copied exactly.
export { exact } from '../json.js';

export interface FieldError {
  readonly path: FieldPath;
  readonly code: DiagnosticCode;
  readonly message: string;
}

export type Rec = Readonly<Record<string, unknown>>;

export interface StringRule {
  readonly required?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: RegExp;
  readonly enum?: readonly string[];
}

export interface IntRule {
  readonly required?: boolean;
  readonly min?: number;
  readonly max?: number;
}

export function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
}

export class Fields {
  /** Made at the first error: most objects have none, and share the one empty list. */
  private found: FieldError[] | undefined;

  /** The errors found so far. */
  get errors(): readonly FieldError[] {
    return this.found ?? NO_ITEMS;
  }

  add(path: FieldPath, code: DiagnosticCode, message: string): void {
    (this.found ??= []).push({ path, code, message });
  }

  /** A mapping at `path`; undefined (and an error when required or mistyped) otherwise. */
  rec(parent: Rec, key: string, path: FieldPath, required = false): Rec | undefined {
    const v = parent[key];
    const at = [...path, key];
    if (v === undefined || v === null) {
      if (required) this.add(at, 'missing-field', 'Required value');
      return undefined;
    }
    if (!isRec(v)) {
      this.add(at, 'wrong-type', `must be an object, got ${show(v)}`);
      return undefined;
    }
    return v;
  }

  list(
    parent: Rec,
    key: string,
    path: FieldPath,
    rule: { min?: number; max?: number; required?: boolean } = {},
  ): unknown[] {
    const v = parent[key];
    const at = [...path, key];
    if (v === undefined || v === null) {
      if (rule.required) this.add(at, 'missing-field', 'Required value');
      return [];
    }
    if (!Array.isArray(v)) {
      this.add(at, 'wrong-type', `must be a list, got ${show(v)}`);
      return [];
    }
    if (rule.max !== undefined && v.length > rule.max) {
      this.add(at, 'too-long', `must have at most ${rule.max} items, has ${v.length}`);
    }
    if (rule.min !== undefined && v.length < rule.min) {
      this.add(at, 'too-short', `must have at least ${rule.min} item${rule.min === 1 ? '' : 's'}`);
    }
    return v;
  }

  /** Each item of a list that is a mapping, with its index. */
  recs(
    parent: Rec,
    key: string,
    path: FieldPath,
    rule: { min?: number; max?: number; required?: boolean } = {},
  ): [Rec, number][] {
    const out: [Rec, number][] = [];
    this.list(parent, key, path, rule).forEach((item, i) => {
      if (isRec(item)) out.push([item, i]);
      else this.add([...path, key, i], 'wrong-type', `must be an object, got ${show(item)}`);
    });
    return out;
  }

  str(parent: Rec, key: string, path: FieldPath, rule: StringRule = {}): string | undefined {
    return this.checkStr(parent[key], [...path, key], rule);
  }

  checkStr(v: unknown, at: FieldPath, rule: StringRule = {}): string | undefined {
    if (v === undefined || v === null) {
      if (rule.required) this.add(at, 'missing-field', 'Required value');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.add(at, 'wrong-type', `must be a string, got ${show(v)}`);
      return undefined;
    }
    if (rule.enum && !rule.enum.includes(v)) {
      this.add(at, 'not-in-enum', `${show(v)} is not one of ${rule.enum.map((e) => show(e)).join(', ')}`);
      return undefined;
    }
    if (rule.minLength !== undefined && v.length < rule.minLength) {
      this.add(
        at,
        'too-short',
        rule.minLength === 1 ? 'must not be empty' : `must be at least ${rule.minLength} characters`,
      );
      return undefined;
    }
    if (rule.maxLength !== undefined && v.length > rule.maxLength) {
      this.add(at, 'too-long', `must be at most ${rule.maxLength} characters, is ${v.length}`);
      return undefined;
    }
    if (rule.pattern && !rule.pattern.test(v)) {
      this.add(at, 'bad-format', `${show(v)} does not match ${rule.pattern.source}`);
      return undefined;
    }
    return v;
  }

  int(parent: Rec, key: string, path: FieldPath, rule: IntRule = {}): number | undefined {
    return this.checkInt(parent[key], [...path, key], rule);
  }

  checkInt(v: unknown, at: FieldPath, rule: IntRule = {}): number | undefined {
    if (v === undefined || v === null) {
      if (rule.required) this.add(at, 'missing-field', 'Required value');
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.add(at, 'wrong-type', `must be an integer, got ${show(v)}`);
      return undefined;
    }
    const { min, max } = rule;
    if ((min !== undefined && v < min) || (max !== undefined && v > max)) {
      const range =
        min !== undefined && max !== undefined
          ? `in ${min}-${max}`
          : min !== undefined
            ? `>= ${min}`
            : `<= ${max}`;
      this.add(at, 'out-of-range', `${v} is not ${range}`);
      return undefined;
    }
    return v;
  }

  bool(parent: Rec, key: string, path: FieldPath): boolean | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.add([...path, key], 'wrong-type', `must be a boolean, got ${show(v)}`);
      return undefined;
    }
    return v;
  }

  /** Strict field validation: reports keys the schema does not define. */
  known(v: Rec, path: FieldPath, keys: readonly string[]): void {
    for (const k of Object.keys(v)) {
      if (!keys.includes(k)) this.add([...path, k], 'unknown-field', `unknown field ${show(k)}`);
    }
  }
}
