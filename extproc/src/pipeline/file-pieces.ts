// Where a YAML file is cut into documents for the incremental compiler, and, when a file
// changes, which of its last pieces still stand: those before the first changed character and
// those after the last, found by comparing the two texts from each end (a memory comparison,
// ~1 ms at 3.4 MB) rather than by cutting the whole new text and looking each of its 10,000
// pieces up by text (~15 ms per edit of one route). Only the pieces between are cut again.
//
// A file is cut before each line that starts a document (`---`). A file with what could make
// pieces depend on each other or count lines differently (a directive `%`, an end marker `...`,
// a lone carriage return) is not cut: it is read whole.

/** A piece of a file: where it stands in the text and how many lines stand before it. */
export interface PieceSpan {
  readonly start: number;
  readonly end: number;
  readonly linesBefore: number;
}

const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;
const WHOLE_FILE_ONLY = /^(?:%|\.\.\.(?:[ \t\r\n]|$))|\r(?!\n)/m;

/**
 * The spans of text[from, to), cut before each document start after `from` (which is 0 or a
 * document start itself), their lines counted from `linesBefore`; and the lines before `to`.
 */
function cutBetween(
  text: string,
  from: number,
  to: number,
  linesBefore: number,
): { spans: PieceSpan[]; linesAtEnd: number } {
  const spans: PieceSpan[] = [];
  let lines = linesBefore;
  let start = from;
  // A match at `from` + 1 or + 2 would need a line break where `from`'s own `---` stands.
  DOCUMENT_START.lastIndex = from + 1;
  for (;;) {
    const m = start < to ? DOCUMENT_START.exec(text) : null;
    const end = m && m.index < to ? m.index : to;
    spans.push({ start, end, linesBefore: lines });
    for (let at = text.indexOf('\n', start); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) lines++;
    if (end === to) break;
    start = end;
  }
  DOCUMENT_START.lastIndex = 0;
  return { spans, linesAtEnd: lines };
}

/** The whole text's spans; undefined when it must be read whole. */
export function documentSpans(text: string): PieceSpan[] | undefined {
  if (WHOLE_FILE_ONLY.test(text)) return undefined;
  return cutBetween(text, 0, text.length, 0).spans;
}

/** The file cut before every line that starts a document; undefined when it must be read whole. */
export function documentPieces(text: string): { text: string; linesBefore: number }[] | undefined {
  return documentSpans(text)?.map((s) => ({ text: text.slice(s.start, s.end), linesBefore: s.linesBefore }));
}

/** Characters compared at a time: a slice comparison runs as a memory comparison. */
const BLOCK = 4096;

/** The length of the common start of a and b. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= n && a.slice(i, i + BLOCK) === b.slice(i, i + BLOCK)) i += BLOCK;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The length of the common end of a and b, at most `limit`. */
export function commonSuffix(a: string, b: string, limit: number): number {
  const x = a.length;
  const y = b.length;
  let i = 0;
  while (i + BLOCK <= limit && a.slice(x - i - BLOCK, x - i) === b.slice(y - i - BLOCK, y - i)) i += BLOCK;
  while (i < limit && a.charCodeAt(x - i - 1) === b.charCodeAt(y - i - 1)) i++;
  return i;
}

/** How a changed file's pieces follow from its last ones. */
export interface Recut {
  /** The last pieces [0, head) stand where they stood, with the same text. */
  readonly head: number;
  /** The last pieces [tail, …) have the same text, `shift` characters and `lines` lines further down. */
  readonly tail: number;
  readonly shift: number;
  readonly lines: number;
  /** The pieces between, cut from the new text. */
  readonly middle: readonly PieceSpan[];
}

/**
 * The new text's pieces from the last text's (`spans`, its cut): what is the same before and
 * after the change is kept, and the rest cut again. Undefined when the new text must be read
 * whole. The same as cutting the new text afresh: a piece is kept only where every character
 * that decides its bounds is unchanged (the line break before a `---`, the `---`, the character
 * after it), and a directive, end marker or lone carriage return can only have appeared where
 * the text is cut again (the old text had none).
 */
export function recut(last: string, spans: readonly PieceSpan[], text: string): Recut | undefined {
  const prefix = commonPrefix(last, text);
  const suffix = commonSuffix(last, text, Math.min(last.length, text.length) - prefix);
  // A piece ends where the next starts: its `---` and the character after it unchanged too.
  let head = 0;
  while (head < spans.length && (spans[head] as PieceSpan).end + 4 <= prefix) head++;
  // A piece starts after a line break: that one unchanged too.
  let tail = spans.length;
  while (tail > head && (spans[tail - 1] as PieceSpan).start > last.length - suffix) tail--;
  const shift = text.length - last.length;
  const from = head < spans.length ? (spans[head] as PieceSpan).start : text.length;
  const to = tail < spans.length ? (spans[tail] as PieceSpan).start + shift : text.length;
  // The text between starts at a document start (or 0) and ends before one (or at the end).
  if (WHOLE_FILE_ONLY.test(text.slice(from, to))) return undefined;
  const linesBefore = head < spans.length ? (spans[head] as PieceSpan).linesBefore : 0;
  const { spans: middle, linesAtEnd } = cutBetween(text, from, to, linesBefore);
  const lines = tail < spans.length ? linesAtEnd - (spans[tail] as PieceSpan).linesBefore : 0;
  return { head, tail, shift, lines, middle };
}
