// The pinned endpoint in the 19-byte form the session token encrypts — family (4 or 6),
// a 16-byte address (IPv4 in the first four bytes), the port big-endian — and its
// canonical text. Twin of filter/assembly/session/endpoint.ts: the same inputs are
// accepted and the same text is produced (RFC 5952 for IPv6).

export const ENDPOINT_BYTES = 19;
const ENDPOINT_TEXT_ACCEPTED = 64;

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return bytes;
}

function parseIpv6(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string, last: boolean): number[] | undefined => {
    if (half === '') return [];
    const groups: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (last && i === pieces.length - 1 && piece.includes('.')) {
        const quad = parseIpv4(piece);
        if (!quad) return undefined;
        groups.push((quad[0]! << 8) | quad[1]!, (quad[2]! << 8) | quad[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  let groups: number[];
  if (halves.length === 1) {
    const all = groupsOf(halves[0]!, true);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  } else {
    const head = groupsOf(halves[0]!, false);
    const tail = groupsOf(halves[1]!, true);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** "a.b.c.d:port" or "[v6]:port" → the 19-byte form, or undefined when invalid. */
export function parseEndpoint(text: string): Buffer | undefined {
  if (text.length < 3 || text.length > ENDPOINT_TEXT_ACCEPTED) return undefined;
  let family: 4 | 6;
  let address: number[] | undefined;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return undefined;
    family = 6;
    address = parseIpv6(text.slice(1, close));
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon <= 0) return undefined;
    family = 4;
    address = parseIpv4(text.slice(0, colon));
    portText = text.slice(colon + 1);
  }
  if (!address || !/^[1-9][0-9]{0,4}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > 65535) return undefined;
  const out = Buffer.alloc(ENDPOINT_BYTES);
  out[0] = family;
  Buffer.from(address).copy(out, 1);
  out.writeUInt16BE(port, 17);
  return out;
}

function formatIpv6(address: Buffer): string {
  if (address.subarray(0, 10).every((b) => b === 0) && address.readUInt16BE(10) === 0xffff) {
    return `::ffff:${[...address.subarray(12, 16)].join('.')}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => address.readUInt16BE(i * 2));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8;) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** The canonical text of a 19-byte endpoint, or undefined when the bytes are not one. */
export function formatEndpoint(binary: Buffer): string | undefined {
  if (binary.length !== ENDPOINT_BYTES) return undefined;
  const port = binary.readUInt16BE(17);
  if (port === 0) return undefined;
  if (binary[0] === 4) {
    if (!binary.subarray(5, 17).every((b) => b === 0)) return undefined;
    return `${[...binary.subarray(1, 5)].join('.')}:${port}`;
  }
  if (binary[0] === 6) return `[${formatIpv6(binary.subarray(1, 17))}]:${port}`;
  return undefined;
}

/** "[2001:DB8:0::1]:80" → "[2001:db8::1]:80"; undefined when not an endpoint. */
export function normalizeEndpoint(text: string): string | undefined {
  const binary = parseEndpoint(text);
  return binary && formatEndpoint(binary);
}
