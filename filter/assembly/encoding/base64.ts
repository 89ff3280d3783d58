// Base64 (RFC 4648). The standard alphabet (§4) carries session keys in configuration
// and the host-pinning header Envoy's stateful_session reads; the URL-safe alphabet
// without padding (§5) carries session tokens in cookies and headers.
//
// Decoders are strict and total: any character outside the alphabet, a length no
// encoder produces, misplaced padding or non-zero unused bits give -1, so each byte
// string has exactly one accepted spelling. They never write past `capacity`; on -1
// the bytes already written to `dst` mean nothing. Inputs are raw bytes (`*Bytes`) or
// AssemblyScript strings (UTF-16), read in place without copying.

function sextet(c: u32, url: bool): i32 {
  if (c - 65 < 26) return <i32>(c - 65); // A-Z
  if (c - 97 < 26) return <i32>(c - 71); // a-z
  if (c - 48 < 10) return <i32>(c + 4); // 0-9
  if (url) {
    if (c == 45) return 62; // -
    if (c == 95) return 63; // _
  } else {
    if (c == 43) return 62; // +
    if (c == 47) return 63; // /
  }
  return -1;
}

function digit(value: u32, url: bool): u8 {
  if (value < 26) return <u8>(value + 65);
  if (value < 52) return <u8>(value + 71);
  if (value < 62) return <u8>(value - 4);
  if (value == 62) return url ? 45 : 43;
  return url ? 95 : 47;
}

function charAt(src: usize, index: i32, wide: bool): u32 {
  return wide ? <u32>load<u16>(src + ((<usize>index) << 1)) : <u32>load<u8>(src + <usize>index);
}

/** Characters needed to encode `length` bytes; padded (standard) or not (URL-safe). */
export function base64EncodedLength(length: i32, padded: bool): i32 {
  if (length <= 0) return 0;
  if (padded) return ((length + 2) / 3) * 4;
  const left = length % 3;
  return (length / 3) * 4 + (left == 0 ? 0 : left + 1);
}

function encode(src: usize, length: i32, dst: usize, url: bool): i32 {
  if (length <= 0) return 0;
  let out: usize = dst;
  let i = 0;
  for (; i + 3 <= length; i += 3) {
    const triple =
      ((<u32>load<u8>(src + <usize>i)) << 16) |
      ((<u32>load<u8>(src + <usize>i + 1)) << 8) |
      (<u32>load<u8>(src + <usize>i + 2));
    store<u8>(out, digit(triple >>> 18, url), 0);
    store<u8>(out, digit((triple >>> 12) & 63, url), 1);
    store<u8>(out, digit((triple >>> 6) & 63, url), 2);
    store<u8>(out, digit(triple & 63, url), 3);
    out += 4;
  }
  const left = length - i;
  if (left == 1) {
    const b0 = <u32>load<u8>(src + <usize>i);
    store<u8>(out, digit(b0 >>> 2, url), 0);
    store<u8>(out, digit((b0 & 3) << 4, url), 1);
    out += 2;
    if (!url) {
      store<u16>(out, 0x3d3d); // "=="
      out += 2;
    }
  } else if (left == 2) {
    const b0 = <u32>load<u8>(src + <usize>i);
    const b1 = <u32>load<u8>(src + <usize>i + 1);
    store<u8>(out, digit(b0 >>> 2, url), 0);
    store<u8>(out, digit(((b0 & 3) << 4) | (b1 >>> 4), url), 1);
    store<u8>(out, digit((b1 & 15) << 2, url), 2);
    out += 3;
    if (!url) {
      store<u8>(out, 0x3d); // "="
      out += 1;
    }
  }
  return <i32>(out - dst);
}

function decode(src: usize, length: i32, wide: bool, url: bool, dst: usize, capacity: i32): i32 {
  if (length <= 0) return 0;
  let n = length;
  // Standard base64 may carry one or two '=' that complete the last quantum.
  if (!url && (n & 3) == 0) {
    if (charAt(src, n - 1, wide) == 61) {
      n--;
      if (charAt(src, n - 1, wide) == 61) n--;
    }
  }
  const tail = n & 3;
  if (tail == 1) return -1;
  const size = (n >> 2) * 3 + (tail == 0 ? 0 : tail - 1);
  if (size > capacity) return -1;
  let out: usize = dst;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const a = sextet(charAt(src, i, wide), url);
    const b = sextet(charAt(src, i + 1, wide), url);
    const c = sextet(charAt(src, i + 2, wide), url);
    const d = sextet(charAt(src, i + 3, wide), url);
    if ((a | b | c | d) < 0) return -1;
    const triple = ((<u32>a) << 18) | ((<u32>b) << 12) | ((<u32>c) << 6) | (<u32>d);
    store<u8>(out, <u8>(triple >>> 16), 0);
    store<u8>(out, <u8>(triple >>> 8), 1);
    store<u8>(out, <u8>triple, 2);
    out += 3;
  }
  if (tail == 2) {
    const a = sextet(charAt(src, i, wide), url);
    const b = sextet(charAt(src, i + 1, wide), url);
    if ((a | b) < 0 || (b & 15) != 0) return -1;
    store<u8>(out, <u8>((a << 2) | (b >> 4)));
  } else if (tail == 3) {
    const a = sextet(charAt(src, i, wide), url);
    const b = sextet(charAt(src, i + 1, wide), url);
    const c = sextet(charAt(src, i + 2, wide), url);
    if ((a | b | c) < 0 || (c & 3) != 0) return -1;
    store<u8>(out, <u8>((a << 2) | (b >> 4)), 0);
    store<u8>(out, <u8>(((b & 15) << 4) | (c >> 2)), 1);
  }
  return size;
}

/** Standard alphabet with padding; returns the characters written (ASCII) to `dst`. */
export function encodeBase64(src: usize, length: i32, dst: usize): i32 {
  return encode(src, length, dst, false);
}

/** URL-safe alphabet without padding; returns the characters written (ASCII) to `dst`. */
export function encodeBase64Url(src: usize, length: i32, dst: usize): i32 {
  return encode(src, length, dst, true);
}

/** Decodes standard base64 (padding optional) from ASCII bytes; the decoded length or -1. */
export function decodeBase64Bytes(src: usize, length: i32, dst: usize, capacity: i32): i32 {
  return decode(src, length, false, false, dst, capacity);
}

/** Decodes standard base64 (padding optional) from a string; the decoded length or -1. */
export function decodeBase64String(text: string, dst: usize, capacity: i32): i32 {
  return decode(changetype<usize>(text), text.length, true, false, dst, capacity);
}

/** Decodes unpadded URL-safe base64 from ASCII bytes; the decoded length or -1. */
export function decodeBase64UrlBytes(src: usize, length: i32, dst: usize, capacity: i32): i32 {
  return decode(src, length, false, true, dst, capacity);
}

/** Decodes unpadded URL-safe base64 from a string; the decoded length or -1. */
export function decodeBase64UrlString(text: string, dst: usize, capacity: i32): i32 {
  return decode(changetype<usize>(text), text.length, true, true, dst, capacity);
}
