// The compiler a watching service keeps between reloads: a YAML document whose text did not
// change is neither parsed nor decoded again, so editing one route in a file of 10,000 costs
// that one document (plus the stages after decoding, which still see every object). The
// result is always what compileConfig gives for the same input (a test holds the two equal
// after seeded random edit sequences).
//
// A file is cut into documents at the lines that start one (`---`); each piece is parsed
// alone, and its lines are shifted by the lines before it. YAML scopes anchors, tags and
// values to their document, so the pieces read as the whole file does. A file with what
// could make pieces depend on each other or count lines differently (a directive `%`, an
// end marker `...`, a lone carriage return) is parsed whole, and so is a file whose pieces
// hold a syntax error: the whole file then reports it exactly as a full compile does.
import type { Diagnostic, FieldPath } from '../gatewayapi/diagnostic.js';
import type { AnyObject } from '../gatewayapi/model.js';
import { exact } from '../gatewayapi/fields.js';
import {
  type ConfigFile,
  type ObjectInput,
  type ParseResult,
  type SourceObject,
  parseConfigFiles,
  parseObjects,
} from '../gatewayapi/parse.js';
import type { ProvidedConfig } from '../provider/provider.js';
import { IrMemo } from '../ir/ir-memo.js';
import { type Snapshot, compileConfig } from './snapshot.js';
import { TranslateMemo } from '../translate/translate-memo.js';

/** A piece of a file: its text and how many lines stand before it. */
interface Piece {
  readonly text: string;
  readonly linesBefore: number;
}

/** What one piece parsed to, with lines counted from the piece's first line. */
type PieceResult = ParseResult;

interface CachedFile {
  readonly text: string;
  /** The file's pieces by their text; absent when the file is parsed whole. */
  readonly pieces: ReadonlyMap<string, PieceResult>;
  readonly result: ParseResult;
}

const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;
const WHOLE_FILE_ONLY = /^(?:%|\.\.\.(?:[ \t\r\n]|$))|\r(?!\n)/m;

/** The file cut before every line that starts a document; undefined when it must be read whole. */
export function documentPieces(text: string): Piece[] | undefined {
  if (WHOLE_FILE_ONLY.test(text)) return undefined;
  const starts = [0];
  for (const m of text.matchAll(DOCUMENT_START)) if (m.index > 0) starts.push(m.index);
  const pieces: Piece[] = [];
  let lines = 0;
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i] as number;
    const end = starts[i + 1] ?? text.length;
    pieces.push({ text: text.slice(start, end), linesBefore: lines });
    for (let at = text.indexOf('\n', start); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) lines++;
  }
  return pieces;
}

/** The text as a string of its own, holding no larger string it was cut from. */
function ownCopy(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** The same object seen `lines` further down its file. */
function shifted(src: SourceObject, lines: number): SourceObject {
  if (lines === 0) return src;
  return {
    ...src,
    source: { ...src.source, line: src.source.line + lines },
    lineOf: (path: FieldPath) => src.lineOf(path) + lines,
  };
}

function shiftedDiagnostic(d: Diagnostic, lines: number): Diagnostic {
  return lines === 0 ? d : { ...d, line: d.line + lines };
}

/** What the last compile did anew: documents (or whole files) parsed, objects decoded. */
export interface CompileWork {
  parsed: number;
  decoded: number;
}

/** An object came as its version alone, and this compiler does not hold that version. */
export class StaleObjectsError extends Error {
  constructor(version: string) {
    super(`object version ${version} is not held by the compiler`);
  }
}

export class IncrementalCompiler {
  /** What the last compile parsed and decoded anew (the rest was reused). */
  readonly work: CompileWork = { parsed: 0, decoded: 0 };
  private files = new Map<string, CachedFile>();
  /** Objects handed over with a version, as parsed last time: the same version decodes the same. */
  private versioned = new Map<string, SourceObject>();
  /** The piece's own object behind each object handed to decoding. */
  private readonly unshifted = new WeakMap<SourceObject, SourceObject>();
  /** Decoded objects by the piece's own object, located as it is. */
  private readonly decoded = new WeakMap<SourceObject, AnyObject>();
  /**
   * Each piece's object as last seen down its file, and its decoded copy there: an object
   * that did not move is the same object from one compile to the next, so translation can
   * keep what it made from it (translate/translate-memo.ts).
   */
  private readonly moved = new WeakMap<SourceObject, SourceObject>();
  private readonly copies = new WeakMap<SourceObject, AnyObject>();
  /** What translation keeps between compiles. */
  private readonly translateMemo = new TranslateMemo();
  /** What the IR keeps between builds (read only where the snapshot is used, not on the thread). */
  private readonly irMemo = new IrMemo();

  /** Routes the last compile kept whole (translate/kept-routes.ts). */
  get keptRoutes(): number {
    return this.translateMemo.kept.keptCount;
  }

  /** Rules the last compile translated anew (the rest were kept). */
  get translatedRules(): number {
    return this.translateMemo.translatedRules;
  }

  compile(provided: ProvidedConfig): Snapshot {
    this.work.parsed = 0;
    this.work.decoded = 0;
    return compileConfig(provided, {
      parseDocuments: (files) => this.parse(files),
      parseObjects: (inputs) => this.parseVersioned(inputs),
      decodeObject: (src, decode) => this.decode(src, decode),
      translateMemo: this.translateMemo,
      irMemo: this.irMemo,
    });
  }

  private parse(files: readonly ConfigFile[]): ParseResult {
    const next = new Map<string, CachedFile>();
    const objects: SourceObject[] = [];
    const diagnostics: Diagnostic[] = [];
    for (const file of files) {
      const before = this.files.get(file.path);
      const cached = before?.text === file.text ? before : this.parseFile(file, before);
      next.set(file.path, cached);
      objects.push(...cached.result.objects);
      diagnostics.push(...cached.result.diagnostics);
    }
    this.files = next;
    return { objects, diagnostics };
  }

  /**
   * Objects with a version seen last time are the same SourceObject again, so their decoding
   * is reused; the rest are parsed. Only this compile's versions are kept for the next.
   */
  private parseVersioned(inputs: readonly ObjectInput[]): ParseResult {
    // A version two inputs claim names neither: both are read from their bodies and neither is
    // kept, so no input ever stands in for another.
    const seen = new Set<string>();
    const shared = new Set<string>();
    for (const input of inputs) {
      if (input.version === undefined) continue;
      if (seen.has(input.version)) shared.add(input.version);
      seen.add(input.version);
    }
    const next = new Map<string, SourceObject>();
    const objects: SourceObject[] = [];
    const diagnostics: Diagnostic[] = [];
    for (const input of inputs) {
      const version = input.version !== undefined && !shared.has(input.version) ? input.version : undefined;
      const known = version !== undefined ? this.versioned.get(version) : undefined;
      if (version !== undefined && known) {
        next.set(version, known);
        objects.push(known);
        continue;
      }
      // Sent as its version alone, for an object this compiler no longer holds.
      if (input.body === undefined && input.version !== undefined) throw new StaleObjectsError(input.version);
      const parsed = parseObjects([input]);
      diagnostics.push(...parsed.diagnostics);
      for (const o of parsed.objects) {
        if (version !== undefined) next.set(version, o);
        objects.push(o);
      }
    }
    this.versioned = next;
    return { objects, diagnostics };
  }

  private parseFile(file: ConfigFile, before: CachedFile | undefined): CachedFile {
    const whole = (): CachedFile => {
      this.work.parsed++;
      return { text: file.text, pieces: new Map(), result: parseConfigFiles([file]) };
    };
    const cut = documentPieces(file.text);
    if (!cut) return whole();
    const pieces = new Map<string, PieceResult>();
    const objects: SourceObject[] = [];
    const diagnostics: Diagnostic[] = [];
    for (const piece of cut) {
      const parsed = pieces.get(piece.text) ?? before?.pieces.get(piece.text) ?? this.parsePiece(file, piece);
      if (parsed.diagnostics.some((d) => d.code === 'yaml-syntax')) return whole();
      pieces.set(piece.text, parsed);
      for (const o of parsed.objects) {
        const last = this.moved.get(o);
        const located =
          last && last.source.line === o.source.line + piece.linesBefore
            ? last
            : shifted(o, piece.linesBefore);
        if (located !== o) {
          this.unshifted.set(located, o);
          this.moved.set(o, located);
        }
        objects.push(located);
      }
      for (const d of parsed.diagnostics) diagnostics.push(shiftedDiagnostic(d, piece.linesBefore));
    }
    return { text: file.text, pieces, result: { objects, diagnostics } };
  }

  private parsePiece(file: ConfigFile, piece: Piece): PieceResult {
    this.work.parsed++;
    // Parsed from a copy of its own: the piece is a slice of the whole file's text, and the
    // parser's strings are slices of what it reads, so a piece kept from an earlier version of
    // the file would keep that whole version alive (3.4 MB per edit of a 10,000-route file).
    const { objects, diagnostics } = parseConfigFiles([{ path: file.path, text: ownCopy(piece.text) }]);
    return { objects: exact(objects), diagnostics: exact(diagnostics) };
  }

  private decode(src: SourceObject, decode: (src: SourceObject) => AnyObject): AnyObject {
    const own = this.unshifted.get(src) ?? src;
    let obj = this.decoded.get(own);
    if (!obj) {
      this.work.decoded++;
      obj = decode(own);
      this.decoded.set(own, obj);
    }
    if (obj.origin === src) return obj;
    let copy = this.copies.get(src);
    if (!copy) {
      copy = { ...obj, origin: src };
      this.copies.set(src, copy);
    }
    return copy;
  }
}
