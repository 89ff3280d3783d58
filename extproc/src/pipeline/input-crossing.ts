// A provider's read as it crosses to the compiler thread: told against the last input the thread
// took, so that a change to one route among 10,000 copies that route across, not the 10,000.
// The objects between the same start and end of the two lists (the same ObjectInput objects, or
// inputs of one version: the Kubernetes provider keeps one per object while it does not change,
// and makes a new one of the same version when only its status moved) cross, the others are
// the thread's; of a document whose path the last input had, the text between the same start
// and end of the two texts crosses (nothing, for a file that did not change). Whole, the input
// took ~2 ms to write and 2-4 ms to read on the thread at 10,000 routes (a 3.4 MB file, or
// 10,000 objects named by their versions).
//
// The thread keeps the last input as it took it, each object with a version as that version
// alone (its compiler holds what it made of it; the bodies would hold 10-20 MiB): an object kept
// from it is handed to the compiler so. A request told against another input than the thread's
// fails as stale, and the service sends the input whole.
import type { Diagnostic } from '../gatewayapi/diagnostic.js';
import type { ConfigFile, ObjectInput } from '../gatewayapi/parse.js';
import type { ProvidedConfig } from '../provider/provider.js';
import { commonPrefix, commonSuffix } from './file-pieces.js';

/** A document told against the text of its path in the base: that text, [prefix, length - suffix) replaced by `middle`. */
export interface DocumentChange {
  readonly path: string;
  readonly prefix: number;
  readonly suffix: number;
  readonly middle: string;
}

/** An input as it crosses. */
export interface CrossingInput {
  /** The request whose input this one is told against; absent when it crosses whole. */
  readonly base?: number;
  readonly documents: readonly (ConfigFile | DocumentChange)[];
  /**
   * The base's first `start` objects and its last `end`, with `middle` between: of an input that
   * crosses whole, one JSON text of them (wholeObjects).
   */
  readonly objects: {
    readonly start: number;
    readonly end: number;
    readonly middle: readonly ObjectInput[] | string;
  };
  readonly diagnostics: readonly Diagnostic[];
}

/** A request told against an input the thread does not hold (or a text it does not have). */
export class StaleInputError extends Error {
  constructor(what: string) {
    super(`the compiler does not hold ${what}`);
  }
}

/** Each path's text, for the paths given once. */
function textsByPath(documents: readonly ConfigFile[]): Map<string, string> {
  const texts = new Map<string, string>();
  const twice = new Set<string>();
  for (const d of documents) {
    if (texts.has(d.path)) twice.add(d.path);
    texts.set(d.path, d.text);
  }
  for (const path of twice) texts.delete(path);
  return texts;
}

/** A document told against `last`, the text of its path in the base. */
function documentChange(doc: ConfigFile, last: string | undefined): ConfigFile | DocumentChange {
  if (last === undefined) return doc;
  const { path, text } = doc;
  if (text === last) return { path, prefix: text.length, suffix: 0, middle: '' };
  const prefix = commonPrefix(last, text);
  const suffix = commonSuffix(last, text, Math.min(last.length, text.length) - prefix);
  return { path, prefix, suffix, middle: text.slice(prefix, text.length - suffix) };
}

/**
 * The objects of an input that crosses whole, as one JSON text: postMessage copies a string at
 * once, where its structured clone of 10,000 objects from an API server walked each of them on
 * both threads. Their bodies are JSON data (an API server's objects, decoded from its JSON).
 */
function wholeObjects(objects: readonly ObjectInput[]): readonly ObjectInput[] | string {
  return objects.length === 0 ? objects : JSON.stringify(objects);
}

/** Two inputs the thread takes as one: the same object, or two of one version (what the compiler reads is the same). */
const sameInput = (a: ObjectInput | undefined, b: ObjectInput | undefined): boolean =>
  a === b || (a?.version !== undefined && a.version === b?.version);

/**
 * How far two lists of inputs are the same (sameInput) from the front, and then from the back
 * without reaching into that front part: an object listed again as a new input of its version
 * (the Kubernetes provider's, after a status write) does not cut the ends short.
 */
function sameInputEnds(
  before: readonly ObjectInput[],
  after: readonly ObjectInput[],
): { start: number; end: number } {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && sameInput(before[start], after[start])) start++;
  let end = 0;
  while (end < shorter - start && sameInput(before[before.length - 1 - end], after[after.length - 1 - end]))
    end++;
  return { start, end };
}

/** The version an input carries, held alone. */
function versionOnly(o: ObjectInput): ObjectInput {
  return o.version === undefined ? o : { body: undefined, version: o.version };
}

/** What the last input held, and what a request made of the next one: the thread takes it. */
interface Written {
  readonly id: number;
  readonly provided: ProvidedConfig;
  readonly texts: ReadonlyMap<string, string>;
  /** Its objects' versions, each with how many objects carry it. */
  readonly versions: Map<string, number>;
}

/** Writes a service's requests: told against the last input its thread took. */
export class InputWriter {
  private last: Written | undefined;
  private pending:
    { readonly id: number; readonly provided: ProvidedConfig; start: number; end: number } | undefined;

  /** `provided` as request `id`, told against the input the thread took last (took()). */
  write(provided: ProvidedConfig, id: number): CrossingInput {
    const last = this.last;
    const objects = provided.objects;
    const { start, end } = last ? sameInputEnds(last.provided.objects, objects) : { start: 0, end: 0 };
    this.pending = { id, provided, start, end };
    if (!last) {
      return {
        documents: provided.documents,
        objects: { start, end, middle: wholeObjects(objects) },
        diagnostics: provided.diagnostics,
      };
    }
    // An object between that the thread holds by its version (one alone carried it) crosses as that version.
    const middle = objects
      .slice(start, objects.length - end)
      .map((o) => (o.version !== undefined && last.versions.get(o.version) === 1 ? versionOnly(o) : o));
    return {
      base: last.id,
      documents: provided.documents.map((d) => documentChange(d, last.texts.get(d.path))),
      objects: { start, end, middle },
      diagnostics: provided.diagnostics,
    };
  }

  /** The thread took request `id` (its compile answered): the next request is told against it. */
  took(id: number): void {
    const made = this.pending;
    this.pending = undefined;
    if (made?.id !== id) {
      this.last = undefined;
      return;
    }
    const last = this.last;
    const objects = made.provided.objects;
    const versions = last?.versions ?? new Map<string, number>();
    const count = (list: readonly ObjectInput[], from: number, to: number, by: number) => {
      for (let i = from; i < to; i++) {
        const v = (list[i] as ObjectInput).version;
        if (v === undefined) continue;
        const n = (versions.get(v) ?? 0) + by;
        if (n === 0) versions.delete(v);
        else versions.set(v, n);
      }
    };
    if (last) count(last.provided.objects, made.start, last.provided.objects.length - made.end, -1);
    count(objects, made.start, objects.length - made.end, 1);
    this.last = { id, provided: made.provided, texts: textsByPath(made.provided.documents), versions };
  }

  /** The thread holds no input of ours (it failed, or another took its place): the next crosses whole. */
  forget(): void {
    this.last = undefined;
    this.pending = undefined;
  }
}

/** The thread's side: the input of each request, from the last one it took. */
export class InputReader {
  private last:
    | {
        readonly id: number;
        readonly objects: readonly ObjectInput[];
        readonly texts: ReadonlyMap<string, string>;
      }
    | undefined;

  /** Request `id`'s input; what it names that is not held throws StaleInputError. */
  read(input: CrossingInput, id: number): ProvidedConfig {
    const base = input.base === undefined ? undefined : this.last;
    if (input.base !== undefined && base?.id !== input.base) throw new StaleInputError(`input ${input.base}`);
    const documents = input.documents.map((d): ConfigFile => {
      if ('text' in d) return d;
      const last = base?.texts.get(d.path);
      if (last === undefined || d.prefix + d.suffix > last.length)
        throw new StaleInputError(`the text of ${d.path}`);
      // The same text is the same string: the compiler then sees at once that it did not change.
      if (d.prefix === last.length && d.middle === '') return { path: d.path, text: last };
      return { path: d.path, text: last.slice(0, d.prefix) + d.middle + last.slice(last.length - d.suffix) };
    });
    const kept = base?.objects ?? [];
    const { start, end } = input.objects;
    const middle =
      typeof input.objects.middle === 'string'
        ? (JSON.parse(input.objects.middle) as ObjectInput[])
        : input.objects.middle;
    if (start + end > kept.length) throw new StaleInputError(`${start + end} objects of input ${input.base}`);
    const head = kept.slice(0, start);
    const tail = kept.slice(kept.length - end);
    this.last = { id, objects: head.concat(middle.map(versionOnly), tail), texts: textsByPath(documents) };
    return { documents, objects: head.concat(middle, tail), diagnostics: input.diagnostics };
  }

  /** The input read last was not compiled: the next request must cross whole. */
  forget(): void {
    this.last = undefined;
  }
}
