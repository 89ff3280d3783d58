// YAML text → located objects. Pure: a provider reads the files (provider/file.ts).
// Every object keeps its file and line, and can tell the line of any of its fields.
// Objects a provider hands over already decoded (no text) keep the location it gave, if any.
import { type Document, LineCounter, isNode, isScalar, parseAllDocuments, parseDocument } from 'yaml';
import { type Diagnostic, type FieldPath, NO_SOURCE, type Source } from './diagnostic.js';
import { type FastDocument, loadDocumentsFast } from './yaml-fast.js';

export interface ConfigFile {
  /** Path relative to the configuration root, shown in diagnostics. */
  readonly path: string;
  readonly text: string;
}

export interface SourceObject {
  readonly apiVersion: string;
  readonly kind: string;
  /** `default` when absent (cluster-scoped kinds ignore it). */
  readonly namespace: string;
  readonly name: string;
  /**
   * The whole document as plain data; empty once the incremental compiler decoded the object
   * (pipeline/incremental-compiler.ts forgetBody): only the decoders read it.
   */
  readonly body: Readonly<Record<string, unknown>>;
  readonly source: Source;
  /** The line of a field, or of its nearest present ancestor. */
  readonly lineOf: (path: FieldPath) => number;
}

/** A Gateway API object as plain data, with where it came from when the provider knows. */
export interface ObjectInput {
  readonly body: unknown;
  readonly source?: Source;
  /**
   * Names this input: the same version is the same body and source (the Kubernetes provider
   * numbers each object's content), so a compiler may reuse what it made of it last time. Two
   * inputs of one compile must not share a version.
   */
  readonly version?: string;
}

export interface ParseResult {
  readonly objects: SourceObject[];
  readonly diagnostics: Diagnostic[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `shift`: the lines before the text parsed in its file. */
function lineFinder(
  doc: Document,
  counter: LineCounter,
  fallback: number,
  shift = 0,
): (path: FieldPath) => number {
  return (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) {
        const offset = node.range[0];
        return counter.linePos(offset).line + shift;
      }
    }
    return fallback;
  };
}

/** How a file is parsed. */
export interface ParseOptions {
  /** false: the `yaml` package's full syntax tree (the equivalence test compares with it). */
  readonly fast?: boolean;
  /**
   * Lines before the text in its file, when the text is a part of it (the incremental
   * compiler's pieces): every line said is counted from the file's start.
   */
  readonly linesBefore?: number;
}

/**
 * Parses multi-document YAML files. A broken file yields a located diagnostic; the others
 * still load. Files are read the fast way when they can be (yaml-fast.ts; `fast: false`
 * forces the `yaml` package's full syntax tree, which the equivalence test compares with).
 * Long on purpose: each way a document can fail is reported where it fails, in reading order.
 */
export function parseConfigFiles(files: readonly ConfigFile[], options: ParseOptions = {}): ParseResult {
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  const shift = options.linesBefore ?? 0;
  for (const file of files) {
    const fast = options.fast === false ? undefined : loadDocumentsFast(file.text);
    if (fast) {
      for (const doc of fast) addFastDocument(file, doc, shift, objects, diagnostics);
      continue;
    }
    const counter = new LineCounter();
    let docs: Document.Parsed[];
    try {
      docs = parseAllDocuments(file.text, { lineCounter: counter, prettyErrors: false }) as Document.Parsed[];
    } catch (e) {
      diagnostics.push({
        code: 'yaml-syntax',
        file: file.path,
        line: 1 + shift,
        field: '',
        message: firstLine(String(e)),
      });
      continue;
    }
    if (!Array.isArray(docs)) docs = [];
    for (const doc of docs) {
      if (doc.errors.length > 0) {
        for (const err of doc.errors) {
          const line = (err.linePos?.[0]?.line ?? counter.linePos(err.pos[0]).line) + shift;
          diagnostics.push({
            code: 'yaml-syntax',
            file: file.path,
            line,
            field: '',
            message: firstLine(err.message),
          });
        }
        continue;
      }
      // An empty document (a trailing `---`, `---` twice, a comment-only part) is skipped,
      // as kubectl does: the parser gives it a null scalar.
      if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue;
      const docLine = (doc.contents.range ? counter.linePos(doc.contents.range[0]).line : 1) + shift;
      let body: unknown;
      try {
        body = doc.toJS({ maxAliasCount: 100 });
      } catch (e) {
        diagnostics.push({
          code: 'yaml-syntax',
          file: file.path,
          line: docLine,
          field: '',
          message: firstLine(String(e)),
        });
        continue;
      }
      const source = { file: file.path, line: docLine };
      const o = sourceObject(body, source, lineFinder(doc, counter, docLine, shift));
      if (typeof o === 'string')
        diagnostics.push({ code: 'not-an-object', ...source, field: '', message: o });
      else objects.push(o);
    }
  }
  return { objects, diagnostics };
}

/** A document read the fast way; its fields' lines come from parsing its own text, when asked. */
function addFastDocument(
  file: ConfigFile,
  doc: FastDocument,
  shift: number,
  objects: SourceObject[],
  diagnostics: Diagnostic[],
): void {
  // An empty document (a trailing `---`, `---` twice, a comment-only part) is skipped.
  if (doc.value === null || doc.value === undefined) return;
  const source = { file: file.path, line: doc.line + shift };
  const o = sourceObject(doc.value, source, lazyLineFinder(file.text, doc, source.line));
  if (typeof o === 'string') diagnostics.push({ code: 'not-an-object', ...source, field: '', message: o });
  else objects.push(o);
}

/**
 * Finds a field's line by parsing the document's own text the first time one is asked
 * for (a diagnostic or a status names it); a valid configuration never pays for it.
 */
function lazyLineFinder(text: string, doc: FastDocument, line: number): (path: FieldPath) => number {
  // Where the document stands (`line`: its first, in its file), not the document: its value may be let go once decoded.
  const { start, end } = doc;
  let find: ((path: FieldPath) => number) | undefined;
  return (path) => {
    if (!find) {
      const counter = new LineCounter();
      const parsed = parseDocument(text.slice(start, end), {
        lineCounter: counter,
        prettyErrors: false,
      });
      const within = parsed.errors.length === 0 ? lineFinder(parsed, counter, 1) : () => 1;
      find = (p) => line + within(p) - 1;
    }
    return find(path);
  };
}

/** Objects a provider hands over as data: checked like a document, located where the provider says. */
export function parseObjects(inputs: readonly ObjectInput[]): ParseResult {
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const input of inputs) {
    const source = input.source ?? NO_SOURCE;
    const o = sourceObject(input.body, source, () => source.line);
    if (typeof o === 'string') diagnostics.push({ code: 'not-an-object', ...source, field: '', message: o });
    else objects.push(o);
  }
  return { objects, diagnostics };
}

/** The located object, or why the value is not one. */
function sourceObject(
  body: unknown,
  source: Source,
  lineOf: (path: FieldPath) => number,
): SourceObject | string {
  if (!isRecord(body) || typeof body.apiVersion !== 'string' || typeof body.kind !== 'string') {
    return 'a document must be a mapping with string apiVersion and kind';
  }
  const meta = isRecord(body.metadata) ? body.metadata : {};
  return {
    apiVersion: body.apiVersion,
    kind: body.kind,
    namespace: typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default',
    name: typeof meta.name === 'string' ? meta.name : '',
    body,
    source,
    lineOf,
  };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
