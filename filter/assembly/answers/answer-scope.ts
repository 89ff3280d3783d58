// Reads the scope the control service sends beside each answer in attach mode
// (`sc1;g=<generation>[;q=1][;l=1][;h=<name>,<name>…]`, extproc/src/resolve/answer-scope.ts):
// for which requests the answer holds. Total: anything else, a field this reader does not
// know included, is null, and an answer without a readable scope is never reused.

const MAX_SCOPE_LENGTH: i32 = 1024;
const MAX_GENERATION_LENGTH: i32 = 64;
/** At most this many header names: more would make keys too dear to build on every lookup. */
export const MAX_SCOPE_HEADERS: i32 = 8;

export class AnswerScope {
  constructor(
    /** The configuration generation the answer came from. */
    public readonly generation: string,
    /** The query string is part of the key (the hostname's matches read query parameters). */
    public readonly query: bool,
    /** The listener is part of the key (which Gateway port's routes apply depends on it). */
    public readonly listener: bool,
    /** The values of these request headers are part of the key (lower case, ascending); null: none. */
    public readonly headers: string[] | null,
  ) {}
}

/** True for a character of a lower-case HTTP token (RFC 9110 tchar without A–Z). */
function lowerTchar(c: i32): bool {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) return true;
  switch (c) {
    case 0x21: // !
    case 0x23: // # $ % & '
    case 0x24:
    case 0x25:
    case 0x26:
    case 0x27:
    case 0x2a: // * +
    case 0x2b:
    case 0x2d: // - .
    case 0x2e:
    case 0x5e: // ^ _ `
    case 0x5f:
    case 0x60:
    case 0x7c: // |
    case 0x7e: // ~
      return true;
  }
  return false;
}

/** `a,b,c`: lower-case tokens in strictly ascending order, at most MAX_SCOPE_HEADERS; else null. */
function parseHeaderNames(list: string): string[] | null {
  const names = list.split(',');
  if (names.length > MAX_SCOPE_HEADERS) return null;
  for (let i = 0; i < names.length; i++) {
    const name = unchecked(names[i]);
    if (name.length == 0) return null;
    for (let j = 0; j < name.length; j++) if (!lowerTchar(name.charCodeAt(j))) return null;
    // Ascending, so one host's answers always key their headers in one order.
    if (i > 0 && !(unchecked(names[i - 1]) < name)) return null;
  }
  return names;
}

export function parseAnswerScope(text: string): AnswerScope | null {
  if (text.length > MAX_SCOPE_LENGTH || !text.startsWith('sc1;')) return null;
  const fields = text.slice(4).split(';');
  let generation = '';
  let query = false;
  let listener = false;
  let headers: string[] | null = null;
  for (let i = 0; i < fields.length; i++) {
    const f = unchecked(fields[i]);
    if (f.startsWith('g=')) {
      generation = f.slice(2);
      if (generation.length == 0 || generation.length > MAX_GENERATION_LENGTH) return null;
    } else if (f == 'q=1') {
      query = true;
    } else if (f == 'l=1') {
      listener = true;
    } else if (f.startsWith('h=')) {
      if (headers != null) return null;
      headers = parseHeaderNames(f.slice(2));
      if (headers == null) return null;
    } else if (f != 'q=0' && f != 'l=0') {
      // A field this reader does not know may narrow the answer: never reuse it.
      return null;
    }
  }
  return generation.length > 0 ? new AnswerScope(generation, query, listener, headers) : null;
}
