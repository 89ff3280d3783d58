// Typed wrappers over the host calls. Every NotFound or failure is a value (null,
// false, 0); nothing here throws, asserts or reads outside what the host returned.
import { BufferType, HeaderMapType, LogLevel, MetricType, StreamType, WasmResult } from './enums';
import {
  proxy_add_header_map_value,
  proxy_define_metric,
  proxy_get_buffer_bytes,
  proxy_get_current_time_nanoseconds,
  proxy_get_header_map_pairs,
  proxy_get_header_map_value,
  proxy_get_log_level,
  proxy_get_property,
  proxy_set_property,
  proxy_increment_metric,
  proxy_log,
  proxy_remove_header_map_value,
  proxy_replace_header_map_value,
  proxy_continue_stream,
  proxy_send_local_response,
  proxy_set_effective_context,
  proxy_set_tick_period_milliseconds,
  wasi_random_get,
} from './imports';
import { encodeToScratch, release, RETURN_PTR, RETURN_SIZE, RETURN_U64, scratch, Utf8 } from './memory';

// ---- logging --------------------------------------------------------------------

let logLevel: i32 = LogLevel.Info;

/** Asks the host for its current log level; called on configure and now and then after. */
export function refreshLogLevel(): void {
  if (proxy_get_log_level(RETURN_U64) == WasmResult.Ok) logLevel = load<i32>(RETURN_U64);
}

/** Whether a message at `level` would be written. Check it before building a message. */
export function logEnabled(level: LogLevel): bool {
  return <i32>level >= logLevel;
}

export function log(level: LogLevel, message: string): void {
  if (!logEnabled(level)) return;
  const size = encodeToScratch(message, 0);
  proxy_log(level, scratch(0), size);
}

// ---- time and randomness ----------------------------------------------------------

/** Wall-clock time from the host, in nanoseconds since the epoch; 0 if the host fails. */
export function nowNanos(): u64 {
  if (proxy_get_current_time_nanoseconds(RETURN_U64) != WasmResult.Ok) return 0;
  return load<u64>(RETURN_U64);
}

/** Fills `len` bytes at `ptr` from the host's secure random source (WASI). */
export function randomBytes(ptr: usize, len: usize): bool {
  return wasi_random_get(ptr, len) == 0;
}

// ---- buffers ------------------------------------------------------------------------

/** The whole of a host buffer (e.g. the plugin configuration), or null. */
export function getBuffer(type: BufferType, size: usize): ArrayBuffer | null {
  if (size == 0) return new ArrayBuffer(0);
  if (proxy_get_buffer_bytes(type, 0, <i32>size, RETURN_PTR, RETURN_SIZE) != WasmResult.Ok) return null;
  return takeBuffer();
}

function takeBuffer(): ArrayBuffer {
  const ptr = <usize>load<u32>(RETURN_PTR);
  const size = <i32>load<u32>(RETURN_SIZE);
  const out = new ArrayBuffer(size);
  if (ptr != 0 && size > 0) memory.copy(changetype<usize>(out), ptr, <usize>size);
  release(ptr);
  return out;
}

function takeString(): string {
  const ptr = <usize>load<u32>(RETURN_PTR);
  const size = <usize>load<u32>(RETURN_SIZE);
  const out = ptr != 0 && size > 0 ? String.UTF8.decodeUnsafe(ptr, size) : '';
  release(ptr);
  return out;
}

// ---- headers ------------------------------------------------------------------------

/** A header's value, or null when it is absent. */
export function getHeader(map: HeaderMapType, name: Utf8): string | null {
  const r = proxy_get_header_map_value(map, name.ptr, name.len, RETURN_PTR, RETURN_SIZE);
  if (r != WasmResult.Ok) return null;
  return takeString();
}

/**
 * The values of every entry named `name` (lower-case, as the host keeps names) in the map,
 * in order, into `out` (cleared first), at most `max` of them; returns how many. For a
 * header that may come more than once, where `getHeader` sees only the first (HTTP/1
 * keeps a second `Cookie` header apart). One host call; only the matching values become
 * strings. A malformed serialization (proxy-wasm pairs: u32 count, u32 key and value sizes
 * per pair, then each key and value NUL-terminated) ends the walk: what was read stays.
 */
export function getHeaderValues(map: HeaderMapType, name: Utf8, out: string[], max: i32): i32 {
  out.length = 0;
  if (proxy_get_header_map_pairs(map, RETURN_PTR, RETURN_SIZE) != WasmResult.Ok) return 0;
  const base = <usize>load<u32>(RETURN_PTR);
  const size = <usize>load<u32>(RETURN_SIZE);
  if (base == 0 || size < 4) {
    release(base);
    return 0;
  }
  const count = <usize>load<u32>(base);
  // Each pair takes at least 8 bytes of sizes and 2 NULs: a count past that is a lie.
  if (count > (size - 4) / 10) {
    release(base);
    return 0;
  }
  const end = base + size;
  let sizes = base + 4;
  let data = sizes + count * 8;
  const nameLen = name.len;
  for (let i: usize = 0; i < count && out.length < max; i++) {
    const keyLen = <usize>load<u32>(sizes);
    const valueLen = <usize>load<u32>(sizes + 4);
    sizes += 8;
    // Bounds first, in a form that cannot overflow: key, NUL, value, NUL must fit.
    if (keyLen > end - data || valueLen > end - data - keyLen || end - data - keyLen - valueLen < 2) break;
    const valuePtr = data + keyLen + 1;
    if (keyLen == nameLen && memory.compare(data, name.ptr, nameLen) == 0) {
      out.push(String.UTF8.decodeUnsafe(valuePtr, valueLen));
    }
    data = valuePtr + valueLen + 1;
  }
  release(base);
  return out.length;
}

/** Whether the `len` bytes at `p` spell `name` (lower-case ASCII), ignoring ASCII case. */
function keyIs(p: usize, len: usize, name: string): bool {
  if (len != <usize>name.length) return false;
  for (let i: usize = 0; i < len; i++) {
    let c = <i32>load<u8>(p + i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c != name.charCodeAt(<i32>i)) return false;
  }
  return true;
}

/**
 * Every value of each of `names` (lower-case ASCII) in the map, in the map's order, from
 * one host call: `out[i]` (cleared first) gets the values of `names[i]`; keys compare
 * ignoring ASCII case. Returns the number of pairs in the map, or -1 when the map cannot be
 * read, is malformed, has more than `maxPairs` pairs, or the named values hold more than
 * `maxBytes` bytes: the caller then learns nothing it could key on.
 */
export function getNamedHeaderValues(
  map: HeaderMapType,
  names: string[],
  out: string[][],
  maxPairs: usize,
  maxBytes: usize,
): i32 {
  for (let n = 0; n < names.length; n++) unchecked(out[n]).length = 0;
  if (proxy_get_header_map_pairs(map, RETURN_PTR, RETURN_SIZE) != WasmResult.Ok) return -1;
  const base = <usize>load<u32>(RETURN_PTR);
  const size = <usize>load<u32>(RETURN_SIZE);
  if (base == 0 || size < 4) {
    release(base);
    return -1;
  }
  const count = <usize>load<u32>(base);
  // Each pair takes at least 8 bytes of sizes and 2 NULs: a count past that is a lie.
  if (count > maxPairs || count > (size - 4) / 10) {
    release(base);
    return -1;
  }
  const end = base + size;
  let sizes = base + 4;
  let data = sizes + count * 8;
  let bytes: usize = 0;
  let ok = true;
  for (let i: usize = 0; i < count; i++) {
    const keyLen = <usize>load<u32>(sizes);
    const valueLen = <usize>load<u32>(sizes + 4);
    sizes += 8;
    // Bounds first, in a form that cannot overflow: key, NUL, value, NUL must fit.
    if (keyLen > end - data || valueLen > end - data - keyLen || end - data - keyLen - valueLen < 2) {
      ok = false;
      break;
    }
    const valuePtr = data + keyLen + 1;
    for (let n = 0; n < names.length; n++) {
      if (!keyIs(data, keyLen, unchecked(names[n]))) continue;
      bytes += valueLen;
      if (bytes > maxBytes) ok = false;
      else unchecked(out[n]).push(String.UTF8.decodeUnsafe(valuePtr, valueLen));
      break;
    }
    if (!ok) break;
    data = valuePtr + valueLen + 1;
  }
  release(base);
  return ok ? <i32>count : -1;
}

/** Sets a header, replacing every existing value. */
export function setHeader(map: HeaderMapType, name: Utf8, value: string): bool {
  const size = encodeToScratch(value, 0);
  return proxy_replace_header_map_value(map, name.ptr, name.len, scratch(0), size) == WasmResult.Ok;
}

/** Adds a header value next to any existing ones (e.g. a second Set-Cookie). */
export function addHeader(map: HeaderMapType, name: Utf8, value: string): bool {
  const size = encodeToScratch(value, 0);
  return proxy_add_header_map_value(map, name.ptr, name.len, scratch(0), size) == WasmResult.Ok;
}

export function removeHeader(map: HeaderMapType, name: Utf8): bool {
  return proxy_remove_header_map_value(map, name.ptr, name.len) == WasmResult.Ok;
}

// ---- properties ---------------------------------------------------------------------

/** A property's raw bytes, or null when the host has none (NotFound is a value). */
export function getProperty(path: Utf8): ArrayBuffer | null {
  if (proxy_get_property(path.ptr, path.len, RETURN_PTR, RETURN_SIZE) != WasmResult.Ok) return null;
  return takeBuffer();
}

/** A string property (Envoy hands strings over as their raw bytes), or null. */
export function getPropertyString(path: Utf8): string | null {
  if (proxy_get_property(path.ptr, path.len, RETURN_PTR, RETURN_SIZE) != WasmResult.Ok) return null;
  return takeString();
}

/**
 * Sets a request-scoped value other filters can read: Envoy keeps it as filter state
 * `wasm.<name>` for this request (readable by a matcher, and by get_property `<name>`).
 */
export function setProperty(name: Utf8, value: string): bool {
  const size = encodeToScratch(value, 0);
  return proxy_set_property(name.ptr, name.len, scratch(0), size) == WasmResult.Ok;
}

// ---- local replies ------------------------------------------------------------------

/** Ends the stream with a reply from the proxy; `details` shows in Envoy's access log. */
export function sendLocalResponse(status: i32, details: string, body: string): bool {
  const detailsSize = <usize>String.UTF8.byteLength(details);
  const bodySize = <usize>String.UTF8.byteLength(body);
  const base = scratch(detailsSize + bodySize + 4);
  String.UTF8.encodeUnsafe(changetype<usize>(details), details.length, base);
  String.UTF8.encodeUnsafe(changetype<usize>(body), body.length, base + detailsSize);
  // No extra headers: an empty serialized header map is a u32 zero count.
  const headers = base + detailsSize + bodySize;
  store<u32>(headers, 0);
  const r = proxy_send_local_response(
    status,
    base,
    detailsSize,
    base + detailsSize,
    bodySize,
    headers,
    4,
    -1,
  );
  return r == WasmResult.Ok;
}

// ---- metrics ------------------------------------------------------------------------

/** The id of a metric the host refused to define; using it does nothing. */
export const NO_METRIC: u32 = u32.MAX_VALUE;

/** Defines a counter once (at configure); returns its id, or NO_METRIC. Envoy's first id is 0. */
export function defineCounter(name: string): u32 {
  const size = encodeToScratch(name, 0);
  if (proxy_define_metric(MetricType.Counter, scratch(0), size, RETURN_U64) != WasmResult.Ok)
    return NO_METRIC;
  return load<u32>(RETURN_U64);
}

export function incrementCounter(id: u32, by: i64 = 1): void {
  if (id != NO_METRIC) proxy_increment_metric(id, by);
}

// ---- timers and paused streams --------------------------------------------------------

/** Calls the root context's onTick every `periodMs` (0 stops it). Per root context, per worker. */
export function setTickPeriod(periodMs: u32): void {
  proxy_set_tick_period_milliseconds(periodMs);
}

/** Resumes a request stream paused in an earlier callback; false if the stream is gone. */
export function resumeRequest(contextId: u32): bool {
  if (proxy_set_effective_context(contextId) != WasmResult.Ok) return false;
  return proxy_continue_stream(StreamType.HttpRequest) == WasmResult.Ok;
}
