// Reads one cookie out of a Cookie header (RFC 6265 §5.4 syntax: `a=b; c=d`) and writes
// Set-Cookie values. Total: any header text gives an answer, never a trap.

/** At most this many values of one cookie name are looked at; the rest are ignored. */
export const MAX_COOKIE_VALUES: i32 = 4;

/** What a Cookie header holds for one name. */
export class CookieLookup {
  /** How many times the name appeared. */
  count: i32 = 0;
  /** The first value. */
  value: string = '';
  /** The first MAX_COOKIE_VALUES values, in order (a client or proxy may send duplicates). */
  readonly values: string[] = [];
}

function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09;
}

/** At most this many `Cookie` headers of one request are read (HTTP/1 may carry several). */
export const MAX_COOKIE_HEADERS: i32 = 8;

/**
 * Finds cookie `name` in `header`; the result is written to `out`. With `append`, adds to
 * what `out` holds from the request's earlier `Cookie` headers instead.
 */
export function findCookie(header: string, name: string, out: CookieLookup, append: bool = false): void {
  if (!append) {
    out.count = 0;
    out.value = '';
    out.values.length = 0;
  }
  const len = header.length;
  let i = 0;
  while (i < len) {
    while (i < len && isSpace(header.charCodeAt(i))) i++;
    let end = header.indexOf(';', i);
    if (end < 0) end = len;
    const eq = header.indexOf('=', i);
    if (eq > i && eq < end) {
      let nameEnd = eq;
      while (nameEnd > i && isSpace(header.charCodeAt(nameEnd - 1))) nameEnd--;
      if (nameEnd - i == name.length && header.substring(i, nameEnd) == name) {
        let vStart = eq + 1;
        let vEnd = end;
        while (vStart < vEnd && isSpace(header.charCodeAt(vStart))) vStart++;
        while (vEnd > vStart && isSpace(header.charCodeAt(vEnd - 1))) vEnd--;
        // A cookie-value may be wrapped in double quotes.
        if (vEnd - vStart >= 2 && header.charCodeAt(vStart) == 0x22 && header.charCodeAt(vEnd - 1) == 0x22) {
          vStart++;
          vEnd--;
        }
        out.count++;
        if (out.count <= MAX_COOKIE_VALUES) {
          const value = header.substring(vStart, vEnd);
          if (out.count == 1) out.value = value;
          out.values.push(value);
        }
      }
    }
    i = end + 1;
  }
}

/**
 * A Set-Cookie value with steadfast's attributes: HttpOnly and SameSite=Strict always,
 * Secure on TLS connections, Max-Age only for the Permanent lifetime (maxAgeS >= 0).
 */
export function setCookieValue(
  name: string,
  value: string,
  path: string,
  secure: bool,
  maxAgeS: i64,
): string {
  let out = name + '=' + value + '; Path=' + path + '; HttpOnly; SameSite=Strict';
  if (secure) out += '; Secure';
  if (maxAgeS >= 0) out += '; Max-Age=' + maxAgeS.toString();
  return out;
}
