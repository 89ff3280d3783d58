// An answer's scope: for which requests the filter may reuse it without asking again
// (attach mode's answer cache, docs/attach.md). The resolver reads a request's host (port
// ignored), method and path, the header values and query parameters its matches name, and
// nothing else; a scope names which of those the hostname's matches read (the header names
// too, so the filter keys on their values) and the configuration generation the answer
// came from. The filter's reader (filter/assembly/answers/answer-scope.ts) refuses a scope
// with a field it does not know.
const ANSWER_SCOPE_VERSION = 'sc1';
/** The dynamic metadata key (namespace `steadfast`) the scope travels under, beside `policy`. */
export const METADATA_SCOPE_KEY = 'scope';

/** The generation of a table, from its digest (policy/table-digest.ts): equal tables give equal generations. */
export function tableGeneration(tableDigest: string): string {
  return tableDigest.slice(0, 16);
}

/** What an answer depends on besides host, method and path. */
export interface ScopeReads {
  /** The query string (the hostname's matches read query parameters). */
  readonly query: boolean;
  /** The request's listener (the table has Gateway listeners: which port's routes apply). */
  readonly listener: boolean;
  /** The lower-case names of the request headers the hostname's matches read, in any order. */
  readonly headers: readonly string[];
}

/** At most this many header names in a scope (the filter refuses more). */
const MAX_SCOPE_HEADERS = 8;
/** At most this many characters in the `h=` list (the filter refuses a scope over 1,024). */
const MAX_SCOPE_HEADER_LIST = 512;
/** An HTTP token in lower case: no `,` or `;`, so a list of them never runs into the next field. */
const LOWER_TOKEN = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * `sc1;g=<generation>` for answers that hold for every request with the same host, method
 * and path; `;q=1` when the query string is part of the key too, `;l=1` when the listener
 * is (the Envoy listener's name and the connection's local port, which decide the Gateway
 * port whose routes the resolver reads), `;h=<name>,<name>…` (sorted) when the values of
 * those request headers are. Null when the headers cannot be named within the filter's
 * bounds: such answers are never reused.
 */
export function encodeAnswerScope(generation: string, reads: ScopeReads): string | null {
  let headers = '';
  if (reads.headers.length > 0) {
    if (reads.headers.length > MAX_SCOPE_HEADERS || !reads.headers.every((h) => LOWER_TOKEN.test(h))) {
      return null;
    }
    const list = [...new Set(reads.headers)].sort().join(',');
    if (list.length > MAX_SCOPE_HEADER_LIST) return null;
    headers = `;h=${list}`;
  }
  return `${ANSWER_SCOPE_VERSION};g=${generation}${reads.query ? ';q=1' : ''}${reads.listener ? ';l=1' : ''}${headers}`;
}
