// Validation kept from one compile to the next: the incremental compiler hands over the same
// source objects, in the same order, for what did not change, so a change to one route among
// 10,000 validates the sources between the first and the last that differ from last time's
// (compared from each end by identity) and keeps the rest of the result as it was: without it,
// every compile wrote 10,000 `kind/namespace/name` keys and filled a map with them to find
// duplicates. A source kept gives what it gave last time: its object is decoded from the same
// source (the compiler's decode is kept by source), and whether it is a duplicate depends on the
// keys before it, which change only if a changed source has the key of a kept one — then, and
// while any duplicate is there, the sources are validated whole as validateObjects (validate.ts) does.
// A test holds the result equal to validateObjects' after seeded random changes.
import { changedPart, countsAround } from '../json.js';
import type { Diagnostic } from './diagnostic.js';
import type { AnyObject } from './model.js';
import type { SourceObject } from './parse.js';
import { type DecodeObject, type ValidateResult, modelOf, validateSource } from './validate.js';

/** The last validation, source by source. */
interface Last {
  readonly sources: readonly SourceObject[];
  /** Each source's key (undefined: a kind steadfast does not read). */
  readonly keys: readonly (string | undefined)[];
  readonly objects: readonly AnyObject[];
  readonly diagnostics: readonly Diagnostic[];
  /** How many objects, and diagnostics, the sources before each position gave (one more than sources). */
  readonly objectsBefore: Int32Array;
  readonly diagnosticsBefore: Int32Array;
}

export class ValidateMemo {
  /** Sources the last validation looked at (the rest were kept). */
  validated = 0;
  private last: Last | undefined;
  /** The first source of each key in the last list, while none is a duplicate. */
  private readonly firstOf = new Map<string, SourceObject>();

  validate(sources: readonly SourceObject[], decodeObject: DecodeObject): ValidateResult {
    this.validated = 0;
    return (this.last && this.changed(this.last, sources, decodeObject)) ?? this.whole(sources, decodeObject);
  }

  /** The sources validated whole; what is kept for the next is recorded if no duplicate is there. */
  private whole(sources: readonly SourceObject[], decodeObject: DecodeObject): ValidateResult {
    this.last = undefined;
    this.firstOf.clear();
    const keys: (string | undefined)[] = [];
    const objects: AnyObject[] = [];
    const diagnostics: Diagnostic[] = [];
    const objectsBefore = new Int32Array(sources.length + 1);
    const diagnosticsBefore = new Int32Array(sources.length + 1);
    let duplicates = false;
    for (let i = 0; i < sources.length; i++) {
      const v = validateSource(sources[i] as SourceObject, decodeObject, this.firstOf);
      this.validated++;
      keys.push(v.key);
      if (v.object) objects.push(v.object);
      for (const d of v.diagnostics) diagnostics.push(d);
      objectsBefore[i + 1] = objects.length;
      diagnosticsBefore[i + 1] = diagnostics.length;
      duplicates ||= v.duplicate;
    }
    if (duplicates) this.firstOf.clear();
    else this.last = { sources, keys, objects, diagnostics, objectsBefore, diagnosticsBefore };
    return { model: modelOf(objects), objects, diagnostics };
  }

  /** The changed sources validated, the rest kept; undefined when a changed source's key meets another's. */
  private changed(
    last: Last,
    sources: readonly SourceObject[],
    decodeObject: DecodeObject,
  ): ValidateResult | undefined {
    const at = changedPart(last.sources, sources);
    const gone = new Set<string>();
    for (let i = at.from; i < at.to; i++) {
      const key = last.keys[i];
      if (key !== undefined) gone.add(key);
    }
    const fresh = new Map<string, SourceObject>();
    const seen = {
      get: (key: string) => fresh.get(key) ?? (gone.has(key) ? undefined : this.firstOf.get(key)),
      set: (key: string, src: SourceObject) => fresh.set(key, src),
    };
    const keys: (string | undefined)[] = [];
    const objects: AnyObject[] = [];
    const diagnostics: Diagnostic[] = [];
    const objectsBefore: number[] = [];
    const diagnosticsBefore: number[] = [];
    const objectsFrom = last.objectsBefore[at.from] as number;
    const diagnosticsFrom = last.diagnosticsBefore[at.from] as number;
    for (let i = at.from; i < at.newTo; i++) {
      const v = validateSource(sources[i] as SourceObject, decodeObject, seen);
      this.validated++;
      if (v.duplicate) return undefined;
      keys.push(v.key);
      if (v.object) objects.push(v.object);
      for (const d of v.diagnostics) diagnostics.push(d);
      objectsBefore.push(objectsFrom + objects.length);
      diagnosticsBefore.push(diagnosticsFrom + diagnostics.length);
    }
    for (const key of gone) this.firstOf.delete(key);
    for (const [key, src] of fresh) this.firstOf.set(key, src);
    const objectsTo = last.objectsBefore[at.to] as number;
    const diagnosticsTo = last.diagnosticsBefore[at.to] as number;
    const next: Last = {
      sources,
      keys: last.keys.slice(0, at.from).concat(keys, last.keys.slice(at.to)),
      objects: last.objects.slice(0, objectsFrom).concat(objects, last.objects.slice(objectsTo)),
      diagnostics: last.diagnostics
        .slice(0, diagnosticsFrom)
        .concat(diagnostics, last.diagnostics.slice(diagnosticsTo)),
      objectsBefore: countsAround(last.objectsBefore, at, objectsBefore, sources.length),
      diagnosticsBefore: countsAround(last.diagnosticsBefore, at, diagnosticsBefore, sources.length),
    };
    this.last = next;
    return { model: modelOf(next.objects), objects: next.objects, diagnostics: next.diagnostics };
  }
}
