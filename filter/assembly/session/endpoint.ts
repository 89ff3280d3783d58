// The pinned endpoint, "ip:port" (IPv4) or "[ipv6]:port", in the fixed 19-byte binary
// form the session token encrypts: family (4 or 6), a 16-byte address (IPv4 in the
// first four bytes, the rest zero) and the port big-endian. One size for both families,
// so a token's length does not even tell the client which family its backend has.
// Parsing is total and reads the text in place; formatting writes the canonical text
// (RFC 5952 for IPv6: lower case, no leading zeros, the longest run of two or more zero
// groups as "::", IPv4-mapped addresses as ::ffff:a.b.c.d).

export const ENDPOINT_BYTES: i32 = 19;
/** Longest canonical text: "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535". */
export const ENDPOINT_TEXT_MAX: i32 = 47;

const GROUPS: usize = memory.data(16, 16);
const FORMAT_SCRATCH: usize = memory.data(80, 16);
/** Longest text accepted: full groups with a dotted quad, brackets and port, with room to spare. */
const ENDPOINT_TEXT_ACCEPTED: i32 = 64;

function charAt(src: usize, index: i32, wide: bool): u32 {
  return wide ? <u32>load<u16>(src + ((<usize>index) << 1)) : <u32>load<u8>(src + <usize>index);
}

function hexValue(c: u32): i32 {
  if (c - 48 < 10) return <i32>(c - 48);
  if (c - 97 < 6) return <i32>(c - 87);
  if (c - 65 < 6) return <i32>(c - 55);
  return -1;
}

/** Dotted quad in [start, end): four decimal parts 0-255, no leading zeros. Writes 4 bytes. */
function parseIpv4(src: usize, start: i32, end: i32, wide: bool, dst: usize): bool {
  let i = start;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= end || charAt(src, i, wide) != 46) return false; // '.'
      i++;
    }
    const first = i;
    let value: u32 = 0;
    while (i < end && i - first < 4) {
      const d = charAt(src, i, wide) - 48;
      if (d >= 10) break;
      value = value * 10 + d;
      i++;
    }
    const digits = i - first;
    if (digits == 0 || digits > 3 || value > 255) return false;
    if (digits > 1 && charAt(src, first, wide) == 48) return false;
    store<u8>(dst + <usize>part, <u8>value);
  }
  return i == end;
}

/** Text form in [start, end), RFC 4291 §2.2 including "::" and a trailing dotted quad. Writes 16 bytes. */
function parseIpv6(src: usize, start: i32, end: i32, wide: bool, dst: usize): bool {
  let count = 0;
  let gap = -1;
  let i = start;
  if (i < end && charAt(src, i, wide) == 58) {
    if (i + 1 >= end || charAt(src, i + 1, wide) != 58) return false;
    gap = 0;
    i += 2;
  }
  while (i < end) {
    const groupStart = i;
    let value: u32 = 0;
    while (i < end && i - groupStart < 5) {
      const h = hexValue(charAt(src, i, wide));
      if (h < 0) break;
      value = (value << 4) | (<u32>h);
      i++;
    }
    if (i < end && charAt(src, i, wide) == 46) {
      // An embedded IPv4 address fills the last two groups.
      if (count > 6) return false;
      const quad = GROUPS + ((<usize>count) << 1);
      if (!parseIpv4(src, groupStart, end, wide, quad)) return false;
      count += 2;
      i = end;
      break;
    }
    const digits = i - groupStart;
    if (digits == 0 || digits > 4 || count == 8) return false;
    store<u16>(GROUPS + ((<usize>count) << 1), bswap<u16>(<u16>value));
    count++;
    if (i == end) break;
    if (charAt(src, i, wide) != 58) return false;
    i++;
    if (i < end && charAt(src, i, wide) == 58) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i == end) {
      return false;
    }
  }
  if (gap < 0) {
    if (count != 8) return false;
  } else {
    if (count > 7) return false;
    // Slide the groups after "::" to the end and zero the ones it stands for.
    const after = count - gap;
    for (let k = after - 1; k >= 0; k--) {
      store<u16>(GROUPS + ((<usize>(8 - after + k)) << 1), load<u16>(GROUPS + ((<usize>(gap + k)) << 1)));
    }
    for (let k = gap; k < 8 - after; k++) store<u16>(GROUPS + ((<usize>k) << 1), 0);
  }
  memory.copy(dst, GROUPS, 16);
  return true;
}

/** Decimal port in [start, end): 1-65535, no sign, no leading zeros. */
function parsePort(src: usize, start: i32, end: i32, wide: bool): i32 {
  const digits = end - start;
  if (digits < 1 || digits > 5 || charAt(src, start, wide) == 48) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const d = charAt(src, i, wide) - 48;
    if (d >= 10) return -1;
    value = value * 10 + <i32>d;
  }
  return value <= 65535 ? value : -1;
}

function parse(src: usize, length: i32, wide: bool, dst: usize): i32 {
  if (length < 3 || length > ENDPOINT_TEXT_ACCEPTED) return -1;
  memory.fill(dst, 0, <usize>ENDPOINT_BYTES);
  let portStart: i32;
  if (charAt(src, 0, wide) == 91) {
    // "[v6]:port"
    let close = 1;
    while (close < length && charAt(src, close, wide) != 93) close++;
    if (close + 1 >= length || charAt(src, close + 1, wide) != 58) return -1;
    if (!parseIpv6(src, 1, close, wide, dst + 1)) return -1;
    store<u8>(dst, 6);
    portStart = close + 2;
  } else {
    let colon = length - 1;
    while (colon > 0 && charAt(src, colon, wide) != 58) colon--;
    if (colon <= 0) return -1;
    if (!parseIpv4(src, 0, colon, wide, dst + 1)) return -1;
    store<u8>(dst, 4);
    portStart = colon + 1;
  }
  const port = parsePort(src, portStart, length, wide);
  if (port < 0) return -1;
  store<u16>(dst + 17, bswap<u16>(<u16>port));
  return ENDPOINT_BYTES;
}

/** Parses "a.b.c.d:port" or "[v6]:port" into the 19-byte form at `dst`: 19, or -1 when invalid. */
export function parseEndpoint(text: string, dst: usize): i32 {
  return parse(changetype<usize>(text), text.length, true, dst);
}

/** Like parseEndpoint, from ASCII bytes (e.g. a host property read into linear memory). */
export function parseEndpointBytes(src: usize, length: i32, dst: usize): i32 {
  return parse(src, length, false, dst);
}

function writeDecimal(dst: usize, value: u32): usize {
  let digits: usize = 1;
  for (let v = value; v >= 10; v /= 10) digits++;
  let v = value;
  for (let i = digits; i > 0; i--) {
    store<u8>(dst + i - 1, <u8>(48 + (v % 10)));
    v /= 10;
  }
  return dst + digits;
}

function writeHexGroup(dst: usize, value: u32): usize {
  let shift: i32 = 12;
  while (shift > 0 && ((value >>> shift) & 15) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) {
    const nibble = (value >>> shift) & 15;
    store<u8>(dst, <u8>(nibble < 10 ? 48 + nibble : 87 + nibble));
    dst++;
  }
  return dst;
}

function writeIpv4(dst: usize, address: usize): usize {
  for (let i: usize = 0; i < 4; i++) {
    if (i > 0) {
      store<u8>(dst, 46);
      dst++;
    }
    dst = writeDecimal(dst, <u32>load<u8>(address + i));
  }
  return dst;
}

function writeIpv6(dst: usize, address: usize): usize {
  // RFC 5952 §5: IPv4-mapped addresses keep the dotted quad.
  let mapped = load<u16>(address, 10) == 0xffff;
  for (let i: usize = 0; i < 10; i++) mapped = mapped && load<u8>(address + i) == 0;
  if (mapped) {
    store<u16>(dst, 0x3a3a, 0); // "::"
    store<u32>(dst, 0x66666666, 2); // "ffff"
    store<u8>(dst, 58, 6); // ":"
    return writeIpv4(dst + 7, address + 12);
  }
  // RFC 5952 §4.2: shorten the longest run of two or more zero groups, the first on a tie.
  let bestStart = -1;
  let bestLength = 1;
  let runStart = -1;
  for (let g = 0; g <= 8; g++) {
    const zero = g < 8 && load<u16>(address + ((<usize>g) << 1)) == 0;
    if (zero) {
      if (runStart < 0) runStart = g;
    } else if (runStart >= 0) {
      if (g - runStart > bestLength) {
        bestStart = runStart;
        bestLength = g - runStart;
      }
      runStart = -1;
    }
  }
  let needColon = false;
  for (let g = 0; g < 8; g++) {
    if (bestStart >= 0 && g >= bestStart && g < bestStart + bestLength) {
      if (g == bestStart) {
        store<u16>(dst, 0x3a3a); // "::"
        dst += 2;
        needColon = false;
      }
      continue;
    }
    if (needColon) {
      store<u8>(dst, 58);
      dst++;
    }
    dst = writeHexGroup(dst, <u32>bswap<u16>(load<u16>(address + ((<usize>g) << 1))));
    needColon = true;
  }
  return dst;
}

/**
 * Writes the canonical text of the 19-byte endpoint at `src` to `dst` (room for
 * ENDPOINT_TEXT_MAX bytes): its length, or -1 when the bytes are not a valid endpoint.
 */
export function formatEndpoint(src: usize, dst: usize): i32 {
  const family = load<u8>(src);
  const port = <u32>bswap<u16>(load<u16>(src, 17));
  if (port == 0) return -1;
  let out = dst;
  if (family == 4) {
    for (let i: usize = 5; i < 17; i++) if (load<u8>(src + i) != 0) return -1;
    out = writeIpv4(out, src + 1);
  } else if (family == 6) {
    store<u8>(out, 91);
    out = writeIpv6(out + 1, src + 1);
    store<u8>(out, 93);
    out++;
  } else {
    return -1;
  }
  store<u8>(out, 58);
  out = writeDecimal(out + 1, port);
  return <i32>(out - dst);
}

/** The canonical text of an endpoint ("[2001:DB8:0::1]:80" → "[2001:db8::1]:80"), or "" when invalid. */
export function normalizeEndpoint(text: string): string {
  const binary = FORMAT_SCRATCH;
  if (parseEndpoint(text, binary) < 0) return '';
  const textAt = FORMAT_SCRATCH + 32;
  const length = formatEndpoint(binary, textAt);
  return length < 0 ? '' : String.UTF8.decodeUnsafe(textAt, <usize>length);
}
