// Reads the scope the control service sends beside each answer in attach mode
// (`sc1;g=<generation>[;q=1][;l=1]`, extproc/src/resolve/answer-scope.ts): for which requests
// the answer holds. Total: anything else, a field this reader does not know included, is
// null, and an answer without a readable scope is never reused.

const MAX_SCOPE_LENGTH: i32 = 256;
const MAX_GENERATION_LENGTH: i32 = 64;

export class AnswerScope {
  constructor(
    /** The configuration generation the answer came from. */
    public readonly generation: string,
    /** The query string is part of the key (the hostname's matches read query parameters). */
    public readonly query: bool,
    /** The listener is part of the key (which Gateway port's routes apply depends on it). */
    public readonly listener: bool,
  ) {}
}

export function parseAnswerScope(text: string): AnswerScope | null {
  if (text.length > MAX_SCOPE_LENGTH || !text.startsWith('sc1;')) return null;
  const fields = text.slice(4).split(';');
  let generation = '';
  let query = false;
  let listener = false;
  for (let i = 0; i < fields.length; i++) {
    const f = unchecked(fields[i]);
    if (f.startsWith('g=')) {
      generation = f.slice(2);
      if (generation.length == 0 || generation.length > MAX_GENERATION_LENGTH) return null;
    } else if (f == 'q=1') {
      query = true;
    } else if (f == 'l=1') {
      listener = true;
    } else if (f != 'q=0' && f != 'l=0') {
      // A field this reader does not know may narrow the answer: never reuse it.
      return null;
    }
  }
  return generation.length > 0 ? new AnswerScope(generation, query, listener) : null;
}
