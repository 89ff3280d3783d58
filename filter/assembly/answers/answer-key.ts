// The key an answer is cached under: what the control service's resolver reads of a
// request, in the same shape — the host as it compares it (port and one trailing dot
// dropped, lower case), the method, the path without its query, and the query itself
// when the scope says the hostname's matches read it, and every value of each request
// header the scope names. A request whose key would be
// ambiguous or oversized has no key (it always asks ext_proc): anything outside printable
// ASCII (two different byte strings could decode alike here and differently there), or
// a part longer than the bounds below.

/** Longest authority, method, path and query the cache keys on; longer ones are not cached. */
const MAX_HOST: i32 = 255;
const MAX_METHOD: i32 = 32;
const MAX_PATH: i32 = 2048;

/** True when every character is printable ASCII (no control bytes, nothing decoded from above 0x7e). */
function printable(s: string, from: i32, to: i32): bool {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** `Example.COM:8080` → `example.com`; `[::1]:80` → `[::1]`; null when not cacheable. */
export function hostKey(authority: string): string | null {
  if (authority.length == 0 || authority.length > MAX_HOST) return null;
  if (!printable(authority, 0, authority.length)) return null;
  let end = authority.length;
  if (authority.charCodeAt(0) == 0x5b /* [ */) {
    const close = authority.indexOf(']');
    if (close != -1) end = close + 1;
  } else {
    const colon = authority.lastIndexOf(':');
    if (colon != -1) end = colon;
  }
  if (end > 0 && authority.charCodeAt(end - 1) == 0x2e /* . */) end--;
  // Lower-case ASCII only: a finer key than the resolver's, never a coarser one.
  let lower = false;
  for (let i = 0; i < end; i++) {
    const c = authority.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) {
      lower = true;
      break;
    }
  }
  const host = end == authority.length ? authority : authority.slice(0, end);
  return lower ? host.toLowerCase() : host;
}

/** Where the query starts in `path` (`?`), or the path's length. */
export function queryStart(path: string): i32 {
  const q = path.indexOf('?');
  return q == -1 ? path.length : q;
}

/**
 * `host \n method \n path` (without the query); null when the request has no cacheable key.
 * Newlines cannot occur in any part (printable ASCII only), so parts never run together.
 */
export function baseKey(authority: string | null, method: string | null, path: string | null): string | null {
  if (authority == null || method == null || path == null) return null;
  if (method.length == 0 || method.length > MAX_METHOD || !printable(method, 0, method.length)) return null;
  if (path.length == 0 || path.length > MAX_PATH || !printable(path, 0, path.length)) return null;
  const host = hostKey(authority);
  if (host == null) return null;
  return host + '\n' + method + '\n' + path.slice(0, queryStart(path));
}

/** Longest listener metadata value the cache keys on. */
const MAX_GATEWAY_PORT_BYTES: i32 = 64;

const HEX = '0123456789abcdef';

/**
 * The listener part of a key: the raw bytes of the listener's `gateway_port` metadata (hex;
 * `-` when the listener has none) and the connection's local port; null when not cacheable.
 */
export function listenerKey(gatewayPort: ArrayBuffer | null, port: u64): string | null {
  if (port == 0 || port > 65535) return null;
  let declared = '-';
  if (gatewayPort != null) {
    const n = gatewayPort.byteLength;
    if (n > MAX_GATEWAY_PORT_BYTES) return null;
    declared = '';
    const p = changetype<usize>(gatewayPort);
    for (let i = 0; i < n; i++) {
      const b = load<u8>(p + <usize>i);
      declared += HEX.charAt(b >> 4) + HEX.charAt(b & 15);
    }
  }
  return declared + '\n' + port.toString();
}

/**
 * Most header pairs a keyed request may have: the control service reads only the first 256
 * header entries ext_proc sends (MAX_HEADERS, extproc/src/server/grpc/request-attributes.ts),
 * so past that a named header could be one the resolver never saw.
 */
export const MAX_HEADER_PAIRS: usize = 256;
/** Most bytes of named header values a key holds (the resolver reads up to 16 KiB of each). */
export const MAX_HEADER_VALUE_BYTES: usize = 1024;

/**
 * The headers part of a key, from the first `count` lists of `values`: for each named
 * header, in the scope's order, `\nH` and then each of its values in the request's order
 * after a tab — so an absent header (`\nH`), an empty one (`\nH\t`) and repeated ones
 * (`\nH\ta\tb`; the resolver reads them joined by commas) all differ. Null when a value
 * is not printable ASCII.
 */
export function headersKey(values: string[][], count: i32): string | null {
  let key = '';
  for (let n = 0; n < count; n++) {
    key += '\nH';
    const list = unchecked(values[n]);
    for (let i = 0; i < list.length; i++) {
      const v = unchecked(list[i]);
      if (!printable(v, 0, v.length)) return null;
      key += '\t' + v;
    }
  }
  return key;
}

/**
 * The base key plus what the scope adds: the query string (empty when there is none, as
 * the resolver reads it), the listener and the named headers.
 */
export function fullKey(
  base: string,
  path: string,
  query: bool,
  listener: string | null,
  headers: string | null,
): string {
  let key = base;
  if (query) {
    const q = queryStart(path);
    key += '\n?' + (q < path.length ? path.slice(q + 1) : '');
  }
  if (listener != null) key += '\nL' + listener;
  if (headers != null) key += headers;
  return key;
}
