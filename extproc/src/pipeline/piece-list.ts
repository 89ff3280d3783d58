// A list of plain objects crossing from the compiler thread to the service item by item (the
// table's routes, the objects' statuses). The writer sends an item's JSON only when the
// reader does not hold it already: an item whose JSON is that of an item in the last list the
// reader took crosses as that item's position there. A change to one route among 10,000 then
// copies one item's text across. The writer keeps each item's digest, not its text: an item
// that stays the same object between compiles is written and digested once.
import { jsonDigest } from '../policy/table-digest.js';

export interface PieceList {
  /** Each item in order: its JSON, or its position in list `base` (which the reader holds). */
  readonly items: ReadonlyArray<string | number>;
  readonly base?: number;
}

/** Writes lists for one reader. */
export class PieceWriter<T extends object> {
  private readonly digests = new WeakMap<T, string>();
  /** The last list written: its id, and each item's position by digest. */
  private last: { readonly id: number; readonly at: ReadonlyMap<string, number> } | undefined;

  /**
   * The list as it crosses, and each item's digest. `held` is the id of the list the reader
   * took last (PieceReader.held): only items of that list cross as positions.
   */
  write(items: readonly T[], id: number, held: number | undefined): { list: PieceList; digests: string[] } {
    const base = held !== undefined && this.last?.id === held ? this.last.at : undefined;
    const at = new Map<string, number>();
    const digests: string[] = [];
    const pieces = items.map((item, i) => {
      let digest = this.digests.get(item);
      let text: string | undefined;
      if (digest === undefined) {
        text = JSON.stringify(item);
        digest = jsonDigest(text);
        this.digests.set(item, digest);
      }
      digests.push(digest);
      if (!at.has(digest)) at.set(digest, i);
      return base?.get(digest) ?? text ?? JSON.stringify(item);
    });
    this.last = { id, at };
    return { list: { items: pieces, ...(base && held !== undefined ? { base: held } : {}) }, digests };
  }
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
  read(list: PieceList, id: number, make: (text: string) => T): T[] {
    const base = list.base === undefined ? undefined : this.last;
    if (list.base !== undefined && base?.id !== list.base) {
      throw new Error(`${this.what} ${id} refers to ${this.what} ${list.base}, which is not held`);
    }
    const items = list.items.map((piece) => {
      if (typeof piece === 'string') return make(piece);
      if (base === undefined || piece >= base.items.length)
        throw new Error(`${this.what} ${id}: no item ${piece} in ${this.what} ${list.base}`);
      return base.items[piece] as T;
    });
    this.last = { id, items };
    return items;
  }
}
