// A list of plain objects crossing from the compiler thread to the service item by item (the
// table's routes, the objects' statuses). The writer sends an item's JSON only when the
// reader does not hold it already: an item whose JSON is that of an item in the last list the
// reader took crosses as that item's position there. A change to one route among 10,000 then
// copies one item's text across. The writer keeps each item's digest, not its text: an item
// that stays the same object between compiles is written and digested once.
import { sameEnds } from '../json.js';
import { jsonDigest } from '../policy/table-digest.js';

export interface PieceList {
  /** Each item in order: its JSON, or its position in list `base` (which the reader holds). */
  readonly items: ReadonlyArray<string | number>;
  readonly base?: number;
}

/**
 * A list as it crosses to another thread: its texts' UTF-8 in buffers that postMessage moves
 * (its transfer list) rather than copies, filled as the writer makes each text (TextPack), so
 * that no text outlives its moment on the writing thread; the reader decodes them one by one as
 * it makes the items. As strings, the 13 MB of texts at 10,000 routes stayed on the compiler
 * thread's heap as garbage after crossing, and were copied into the message and out of it.
 */
export interface PackedPieceList {
  /** Per item: its position in list `base` (0 and up), or -1 - k for the k-th text. */
  readonly items: Int32Array;
  readonly chunks: readonly Uint8Array[];
  /** The chunk the k-th text is in, and where it ends there (it starts where the one before ends, or at 0). */
  readonly chunkOf: Uint32Array;
  readonly ends: Uint32Array;
  readonly base?: number;
}

/** Texts written into chunks as they come, for one PackedPieceList. */
export class TextPack {
  private static readonly CHUNK = 1 << 20;
  private readonly chunks: Buffer[] = [];
  private used = 0;
  private readonly chunkOf: number[] = [];
  private readonly ends: number[] = [];

  /** Adds a text; the list item that names it (-1 - its index). */
  readonly add = (text: string): number => {
    const size = Buffer.byteLength(text);
    let chunk = this.chunks[this.chunks.length - 1];
    if (chunk === undefined || this.used + size > chunk.length) {
      // Chunks of their own (not slices of Node's pool), so that they can be moved.
      chunk = Buffer.allocUnsafeSlow(Math.max(TextPack.CHUNK, size));
      this.chunks.push(chunk);
      this.used = 0;
    }
    this.used += chunk.write(text, this.used);
    this.chunkOf.push(this.chunks.length - 1);
    return -1 - (this.ends.push(this.used) - 1);
  };

  /** `list`, whose texts were all added here, packed. */
  packed(list: PieceList): PackedPieceList {
    const last = this.chunks.length - 1;
    return {
      // Every item is a number here (a position, or -1 - k for a text added); without a mapping
      // function, from() copies an array of 10,000 twenty times faster.
      items: Int32Array.from(list.items as readonly number[]),
      chunks: this.chunks.map((c, i) => (i === last ? this.usedOf(c) : c)),
      chunkOf: Uint32Array.from(this.chunkOf),
      ends: Uint32Array.from(this.ends),
      ...(list.base !== undefined ? { base: list.base } : {}),
    };
  }

  /**
   * The last chunk's written part in a buffer of its size: postMessage moves a whole
   * ArrayBuffer, and a one-route change writes a few hundred bytes of a 1 MiB chunk.
   */
  private usedOf(chunk: Buffer): Buffer {
    if (this.used === chunk.length) return chunk;
    // Not Buffer.from: a small one would be a slice of Node's shared pool, which cannot move.
    const own = Buffer.allocUnsafeSlow(this.used);
    chunk.copy(own, 0, 0, this.used);
    return own;
  }
}

/** What postMessage moves of a packed list. */
export function packedBuffers(list: PackedPieceList): ArrayBuffer[] {
  const views = [list.items, list.chunkOf, list.ends, ...list.chunks];
  return views.map((v) => v.buffer as ArrayBuffer);
}

/** Each item of a list, packed or not: a text, or a position in the list it is based on. */
function pieceAt(list: PieceList | PackedPieceList): {
  readonly length: number;
  at(i: number): string | number;
} {
  if (!('chunks' in list)) return { length: list.items.length, at: (i) => list.items[i] as string | number };
  const { items, chunkOf, ends } = list;
  const chunks = list.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return {
    length: items.length,
    at: (i) => {
      const piece = items[i] as number;
      if (piece >= 0) return piece;
      const k = -1 - piece;
      const chunk = chunkOf[k] as number;
      const start = k > 0 && chunkOf[k - 1] === chunk ? (ends[k - 1] as number) : 0;
      return (chunks[chunk] as Buffer).toString('utf8', start, ends[k]);
    },
  };
}

/**
 * The last list written: its id, items, each item's digest, whether no two items have one
 * digest, and (made when a whole write needs it) each digest's first position.
 */
interface WrittenList<T> {
  readonly id: number;
  readonly items: readonly T[];
  readonly digests: readonly string[];
  readonly unique: boolean;
  at?: Map<string, number>;
}

/**
 * Items between a list's same ends looked up by a scan of the digests held (a comparison of
 * two strings that differ in their first characters, 10,000 in ~0.05 ms) rather than kept in a
 * map of every digest's position, which moved 10,000 positions for a route added near the start.
 */
const SCANNED = 16;

/** Writes lists for one reader. */
export class PieceWriter<T extends object> {
  private readonly digests = new WeakMap<T, string>();
  private last: WrittenList<T> | undefined;

  /**
   * The list as it crosses, and each item's digest. `held` is the id of the list the reader
   * took last (PieceReader.held): only items of that list cross as positions.
   */
  write(
    items: readonly T[],
    id: number,
    held: number | undefined,
    pack?: TextPack,
  ): { list: PieceList; digests: string[] } {
    const base = held !== undefined && this.last?.id === held ? this.last : undefined;
    // Kept from each end while every item of the list held has a digest of its own: its
    // items' positions are then their digests' positions.
    if (base?.unique) {
      const changed = this.writeChanged(base, items, id, pack);
      if (changed) return changed;
    }
    const baseAt = base && (base.at ??= firstPositions(base.digests));
    const at = new Map<string, number>();
    const digests: string[] = [];
    const pieces = items.map((item, i) => {
      const { digest, text } = this.digestOf(item);
      digests.push(digest);
      if (!at.has(digest)) at.set(digest, i);
      return baseAt?.get(digest) ?? this.text(item, text, pack);
    });
    this.last = { id, items, digests, unique: at.size === items.length, at };
    return { list: { items: pieces, ...(base ? { base: base.id } : {}) }, digests };
  }

  /**
   * The list written against `base`, the last one, which the reader holds, when few items lie
   * between the same objects at the two lists' start and end (sameEnds): those before and after
   * are at the same positions there (before the change) or moved by it (after), and only those
   * between are digested and looked for among the digests held. Undefined for more between.
   */
  private writeChanged(
    base: WrittenList<T>,
    items: readonly T[],
    id: number,
    pack: TextPack | undefined,
  ): { list: PieceList; digests: string[] } | undefined {
    const { start, end } = sameEnds(base.items, items);
    const to = base.items.length - end;
    const newTo = items.length - end;
    if (newTo - start > SCANNED) return undefined;
    const pieces: (string | number)[] = new Array<string | number>(items.length);
    for (let i = 0; i < start; i++) pieces[i] = i;
    const middle: string[] = [];
    for (let i = start; i < newTo; i++) {
      const item = items[i] as T;
      const { digest, text } = this.digestOf(item);
      middle.push(digest);
      const held = base.digests.indexOf(digest);
      pieces[i] = held >= 0 ? held : this.text(item, text, pack);
    }
    for (let k = 0; k < end; k++) pieces[newTo + k] = to + k;
    const digests = base.digests.slice(0, start).concat(middle, base.digests.slice(to));
    // Unique still while each digest between is there once (the others were, and are the same).
    const unique = middle.every((d) => digests.indexOf(d) === digests.lastIndexOf(d));
    this.last = { id, items, digests, unique };
    return { list: { items: pieces, base: base.id }, digests };
  }

  /** The item's digest, and its JSON when it was made for it now. */
  private digestOf(item: T): { digest: string; text: string | undefined } {
    const digest = this.digests.get(item);
    if (digest !== undefined) return { digest, text: undefined };
    const text = JSON.stringify(item);
    const made = jsonDigest(text);
    this.digests.set(item, made);
    return { digest: made, text };
  }

  /** The item as it crosses in text: its JSON, or where `pack` put it. */
  private text(item: T, text: string | undefined, pack: TextPack | undefined): string | number {
    const json = text ?? JSON.stringify(item);
    return pack ? pack.add(json) : json;
  }
}

function firstPositions(digests: readonly string[]): Map<string, number> {
  const at = new Map<string, number>();
  digests.forEach((d, i) => {
    if (!at.has(d)) at.set(d, i);
  });
  return at;
}

/** Reads lists from one writer, keeping the items of the last one for the next. */
export class PieceReader<T> {
  private last: { readonly id: number; readonly items: readonly T[] } | undefined;

  /** @param what names the lists in errors, e.g. `policy table`. */
  constructor(private readonly what: string) {}

  /** The id of the last list read, for the writer. */
  get held(): number | undefined {
    return this.last?.id;
  }

  /** List `id`: items sent as JSON made with `make`, the others those of the list held. */
  read(list: PieceList | PackedPieceList, id: number, make: (text: string) => T): T[] {
    const base = list.base === undefined ? undefined : this.last;
    if (list.base !== undefined && base?.id !== list.base) {
      throw new Error(`${this.what} ${id} refers to ${this.what} ${list.base}, which is not held`);
    }
    const pieces = pieceAt(list);
    const items = Array.from({ length: pieces.length }, (_, i) => {
      const piece = pieces.at(i);
      if (typeof piece === 'string') return make(piece);
      if (base === undefined || piece >= base.items.length)
        throw new Error(`${this.what} ${id}: no item ${piece} in ${this.what} ${list.base}`);
      return base.items[piece] as T;
    });
    this.last = { id, items };
    return items;
  }
}
