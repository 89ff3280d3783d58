// The compiler a watching service keeps between reloads: a YAML document whose text did not
// change is neither parsed nor decoded again, so editing one route in a file of 10,000 costs
// that one document (plus the stages after decoding, which still see every object). The
// result is always what compileConfig gives for the same input (a test holds the two equal
// after seeded random edit sequences).
//
// A file is cut into documents at the lines that start one (`---`, file-pieces.ts); each piece
// is parsed alone, its lines counted from the file's start (a piece that moves later is shifted
// by as many lines as it moved). YAML scopes anchors, tags and values to their document, so
// the pieces read as the whole file does. A file with what
// could make pieces depend on each other or count lines differently (a directive `%`, an end
// marker `...`, a lone carriage return) is parsed whole, and so is a file whose pieces hold a
// syntax error: the whole file then reports it exactly as a full compile does. When a file
// changes, its pieces before and after the change are kept as they were (moved down the file
// as far as the change moved them), and only the text between is cut and looked at again.
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
import { ValidateMemo } from '../gatewayapi/validate-memo.js';
import { type PieceSpan, type Recut, documentSpans, recut } from './file-pieces.js';
import { type Snapshot, compileConfig } from './snapshot.js';
import { TranslateMemo } from '../translate/translate-memo.js';

export { documentPieces } from './file-pieces.js';

/**
 * What one piece parsed to, located where it stood then (`linesBefore`): at a file's first cut
 * each object is already where it stands, and no located copy of it is made.
 */
interface PieceResult {
  readonly objects: readonly SourceObject[];
  readonly diagnostics: readonly Diagnostic[];
  readonly linesBefore: number;
}

/** A piece where it stands in its file, what it parsed to, and that located there. */
interface PlacedPiece extends PieceSpan {
  readonly parsed: PieceResult;
  readonly objects: readonly SourceObject[];
  readonly diagnostics: readonly Diagnostic[];
}

interface CachedFile {
  readonly text: string;
  /** The file's pieces in order; absent when the file is parsed whole. */
  readonly pieces?: readonly PlacedPiece[];
  readonly result: ParseResult;
}

/** The text as a string of its own, holding no larger string it was cut from. */
function ownCopy(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** What a decoded object's source holds in place of its parsed document. */
const DECODED_BODY: SourceObject['body'] = Object.freeze({});

/**
 * Drops a decoded source's parsed document. Only the decoders read `body`, and this compiler
 * decodes a source once (IncrementalCompiler.decode): its located copies made later copy the
 * empty one.
 */
function forgetBody(src: SourceObject): void {
  (src as { body: SourceObject['body'] }).body = DECODED_BODY;
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

/**
 * A piece written key by key, so that every piece has the same hidden class: a literal that
 * starts with a spread gets a map of its own (json.ts sharedShape), and the loops over a file's
 * 10,000 pieces (recut, and gathering their objects) read them about 30 times slower then.
 */
function placedPiece(
  span: PieceSpan,
  parsed: PieceResult,
  objects: readonly SourceObject[],
  diagnostics: readonly Diagnostic[],
): PlacedPiece {
  return { start: span.start, end: span.end, linesBefore: span.linesBefore, parsed, objects, diagnostics };
}

/** A file's first cut: every piece is new. */
function firstCut(text: string): Recut | undefined {
  const middle = documentSpans(text);
  return middle && { head: 0, tail: 0, shift: 0, lines: 0, middle };
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
   * Each piece's object as last seen down its file, and the decoded copy of each object that
   * stands elsewhere than where its piece was parsed: an object that did not move is the same
   * object from one compile to the next, so translation can keep what it made from it
   * (translate/translate-memo.ts); and it is found again by one lookup.
   */
  private readonly moved = new WeakMap<SourceObject, SourceObject>();
  private readonly given = new WeakMap<SourceObject, AnyObject>();
  /** What validation keeps between compiles. */
  private readonly validateMemo = new ValidateMemo();
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
      validateMemo: this.validateMemo,
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
      return { text: file.text, result: parseConfigFiles([file]) };
    };
    const last = before?.pieces;
    const plan: Recut | undefined = last
      ? recut((before as CachedFile).text, last, file.text)
      : firstCut(file.text);
    if (!plan) return whole();
    const middle = this.placeMiddle(file, plan.middle, last?.slice(plan.head, plan.tail) ?? [], before?.text);
    if (!middle) return whole();
    const pieces = [...(last?.slice(0, plan.head) ?? []), ...middle];
    for (let i = plan.tail; i < (last?.length ?? 0); i++) {
      const piece = (last as readonly PlacedPiece[])[i] as PlacedPiece;
      pieces.push(
        plan.shift === 0 && plan.lines === 0 ? piece : this.moveDown(piece, plan.shift, plan.lines),
      );
    }
    const objects: SourceObject[] = [];
    const diagnostics: Diagnostic[] = [];
    for (const piece of pieces) {
      for (const o of piece.objects) objects.push(o);
      for (const d of piece.diagnostics) diagnostics.push(d);
    }
    return { text: file.text, pieces, result: { objects, diagnostics } };
  }

  /**
   * The pieces cut anew, each parsed unless a piece it replaces (a document moved within the
   * changed part) or one before it has its text; undefined when one holds a syntax error.
   */
  private placeMiddle(
    file: ConfigFile,
    spans: readonly PieceSpan[],
    replaced: readonly PlacedPiece[],
    lastText: string | undefined,
  ): PlacedPiece[] | undefined {
    const known = new Map<string, PieceResult>();
    for (const p of replaced) known.set((lastText as string).slice(p.start, p.end), p.parsed);
    const placed: PlacedPiece[] = [];
    for (const span of spans) {
      const text = file.text.slice(span.start, span.end);
      let parsed = known.get(text);
      if (!parsed) known.set(text, (parsed = this.parsePiece(file, text, span.linesBefore)));
      if (parsed.diagnostics.some((d) => d.code === 'yaml-syntax')) return undefined;
      placed.push(this.place(span, parsed));
    }
    return placed;
  }

  /** A kept piece further down its file. */
  private moveDown(piece: PlacedPiece, shift: number, lines: number): PlacedPiece {
    const span = {
      start: piece.start + shift,
      end: piece.end + shift,
      linesBefore: piece.linesBefore + lines,
    };
    return lines === 0
      ? placedPiece(span, piece.parsed, piece.objects, piece.diagnostics)
      : this.place(span, piece.parsed);
  }

  /** A parsed piece located where it stands: its objects the same as last time when they did not move. */
  private place(span: PieceSpan, parsed: PieceResult): PlacedPiece {
    const lines = span.linesBefore - parsed.linesBefore;
    const objects = parsed.objects.map((o) => {
      const last = this.moved.get(o);
      const located = last && last.source.line === o.source.line + lines ? last : shifted(o, lines);
      if (located !== o) {
        this.unshifted.set(located, o);
        this.moved.set(o, located);
      }
      return located;
    });
    // Most pieces have none: their (empty) list is shared, not copied.
    const diagnostics =
      parsed.diagnostics.length === 0
        ? parsed.diagnostics
        : parsed.diagnostics.map((d) => shiftedDiagnostic(d, lines));
    return placedPiece(span, parsed, objects, diagnostics);
  }

  private parsePiece(file: ConfigFile, text: string, linesBefore: number): PieceResult {
    this.work.parsed++;
    // Parsed from a copy of its own: the piece is a slice of the whole file's text, and the
    // parser's strings are slices of what it reads, so a piece kept from an earlier version of
    // the file would keep that whole version alive (3.4 MB per edit of a 10,000-route file).
    const { objects, diagnostics } = parseConfigFiles([{ path: file.path, text: ownCopy(text) }], {
      linesBefore,
    });
    return { objects: exact(objects), diagnostics: exact(diagnostics), linesBefore };
  }

  private decode(src: SourceObject, decode: (src: SourceObject) => AnyObject): AnyObject {
    const given = this.given.get(src);
    if (given) return given;
    const own = this.unshifted.get(src) ?? src;
    let obj = this.decoded.get(own);
    if (!obj) {
      this.work.decoded++;
      obj = decode(own);
      this.decoded.set(own, obj);
      // Its decoding is kept by the piece's object, so nothing reads its parsed document again:
      // let it go (~1 KB per route, 8-11 MiB of the thread's heap at 10,000 routes).
      forgetBody(own);
      forgetBody(src);
    }
    if (obj.origin === src) return obj;
    // A copy where it stands now, found again by one lookup.
    const located = { ...obj, origin: src };
    this.given.set(src, located);
    return located;
  }
}
