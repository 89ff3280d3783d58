// Poly1305 (RFC 8439 §2.5) with the accumulator and r in five 26-bit limbs, so every
// product fits a u64 (wasm has no 128-bit multiply). One module-level MAC state,
// incremental: init, update (any split), optional padToBlock, final.

export const POLY1305_KEY_BYTES: i32 = 32;
export const POLY1305_TAG_BYTES: i32 = 16;

const LIMB: u32 = 0x3ffffff;

// r (clamped) and 5·r for the limbs that wrap past 2^130 (2^130 ≡ 5 mod p).
let r0: u32 = 0;
let r1: u32 = 0;
let r2: u32 = 0;
let r3: u32 = 0;
let r4: u32 = 0;
let s1: u32 = 0;
let s2: u32 = 0;
let s3: u32 = 0;
let s4: u32 = 0;
// The accumulator h.
let h0: u32 = 0;
let h1: u32 = 0;
let h2: u32 = 0;
let h3: u32 = 0;
let h4: u32 = 0;
// s, the second half of the one-time key, added at the end.
const PAD: usize = memory.data(16, 16);
const PENDING: usize = memory.data(16, 16);
let pendingLength: i32 = 0;

/** Adds one 16-byte block plus `highBit` (2^128 for a full block) to h and multiplies by r mod p. */
function absorb(block: usize, highBit: u32): void {
  const t0 = load<u32>(block, 0);
  const t1 = load<u32>(block, 4);
  const t2 = load<u32>(block, 8);
  const t3 = load<u32>(block, 12);
  const a0 = <u64>(h0 + (t0 & LIMB));
  const a1 = <u64>(h1 + (((t0 >>> 26) | (t1 << 6)) & LIMB));
  const a2 = <u64>(h2 + (((t1 >>> 20) | (t2 << 12)) & LIMB));
  const a3 = <u64>(h3 + (((t2 >>> 14) | (t3 << 18)) & LIMB));
  const a4 = <u64>(h4 + ((t3 >>> 8) | highBit));
  // h·r mod p, schoolbook: limb i·j lands at 26(i+j) bits; past 130 bits fold with ·5.
  const d0 = a0 * r0 + a1 * s4 + a2 * s3 + a3 * s2 + a4 * s1;
  let d1 = a0 * r1 + a1 * r0 + a2 * s4 + a3 * s3 + a4 * s2;
  let d2 = a0 * r2 + a1 * r1 + a2 * r0 + a3 * s4 + a4 * s3;
  let d3 = a0 * r3 + a1 * r2 + a2 * r1 + a3 * r0 + a4 * s4;
  let d4 = a0 * r4 + a1 * r3 + a2 * r2 + a3 * r1 + a4 * r0;
  // Partial carry: every limb back near 26 bits.
  d1 += d0 >> 26;
  h0 = (<u32>d0) & LIMB;
  d2 += d1 >> 26;
  h1 = (<u32>d1) & LIMB;
  d3 += d2 >> 26;
  h2 = (<u32>d2) & LIMB;
  d4 += d3 >> 26;
  h3 = (<u32>d3) & LIMB;
  h4 = (<u32>d4) & LIMB;
  // The carry out of h4 can reach 2^30, so fold it into h0 in 64 bits.
  const folded = <u64>h0 + (d4 >> 26) * 5;
  h0 = (<u32>folded) & LIMB;
  h1 += <u32>(folded >> 26);
}

/** Starts a MAC with the 32-byte one-time key at `key` (r || s), clamping r (RFC 8439 §2.5). */
export function poly1305Init(key: usize): void {
  // r &= 0x0ffffffc0ffffffc0ffffffc0fffffff
  const t0 = load<u32>(key, 0) & 0x0fffffff;
  const t1 = load<u32>(key, 4) & 0x0ffffffc;
  const t2 = load<u32>(key, 8) & 0x0ffffffc;
  const t3 = load<u32>(key, 12) & 0x0ffffffc;
  r0 = t0 & LIMB;
  r1 = ((t0 >>> 26) | (t1 << 6)) & LIMB;
  r2 = ((t1 >>> 20) | (t2 << 12)) & LIMB;
  r3 = ((t2 >>> 14) | (t3 << 18)) & LIMB;
  r4 = t3 >>> 8;
  s1 = r1 * 5;
  s2 = r2 * 5;
  s3 = r3 * 5;
  s4 = r4 * 5;
  h0 = 0;
  h1 = 0;
  h2 = 0;
  h3 = 0;
  h4 = 0;
  memory.copy(PAD, key + 16, 16);
  pendingLength = 0;
}

/** MACs `length` bytes at `ptr`; a length of zero or less adds nothing. */
export function poly1305Update(ptr: usize, length: i32): void {
  if (length <= 0) return;
  let remaining = <usize>length;
  if (pendingLength > 0) {
    const room = <usize>(16 - pendingLength);
    const take = remaining < room ? remaining : room;
    memory.copy(PENDING + <usize>pendingLength, ptr, take);
    pendingLength += <i32>take;
    ptr += take;
    remaining -= take;
    if (pendingLength < 16) return;
    absorb(PENDING, 1 << 24);
    pendingLength = 0;
  }
  while (remaining >= 16) {
    absorb(ptr, 1 << 24);
    ptr += 16;
    remaining -= 16;
  }
  if (remaining > 0) {
    memory.copy(PENDING, ptr, remaining);
    pendingLength = <i32>remaining;
  }
}

/** Zero-fills a partial block to 16 bytes and MACs it as a full block: RFC 8439 §2.8's pad16. */
export function poly1305PadToBlock(): void {
  if (pendingLength == 0) return;
  memory.fill(PENDING + <usize>pendingLength, 0, <usize>(16 - pendingLength));
  absorb(PENDING, 1 << 24);
  pendingLength = 0;
}

/** Finishes the MAC and writes the 16-byte tag to `out`, then wipes the state. */
export function poly1305Final(out: usize): void {
  if (pendingLength > 0) {
    // A short last block gets a 0x01 byte after it instead of the 2^128 bit.
    store<u8>(PENDING + <usize>pendingLength, 1);
    memory.fill(PENDING + <usize>pendingLength + 1, 0, <usize>(15 - pendingLength));
    absorb(PENDING, 0);
    pendingLength = 0;
  }
  // Full carry so that h < 2^130 + small.
  let c = h1 >>> 26;
  h1 &= LIMB;
  h2 += c;
  c = h2 >>> 26;
  h2 &= LIMB;
  h3 += c;
  c = h3 >>> 26;
  h3 &= LIMB;
  h4 += c;
  c = h4 >>> 26;
  h4 &= LIMB;
  h0 += c * 5;
  c = h0 >>> 26;
  h0 &= LIMB;
  h1 += c;
  // g = h + 5 - 2^130; if it does not go negative, h >= p and h - p = g is the result.
  let g0 = h0 + 5;
  c = g0 >>> 26;
  g0 &= LIMB;
  let g1 = h1 + c;
  c = g1 >>> 26;
  g1 &= LIMB;
  let g2 = h2 + c;
  c = g2 >>> 26;
  g2 &= LIMB;
  let g3 = h3 + c;
  c = g3 >>> 26;
  g3 &= LIMB;
  const g4 = h4 + c - (1 << 26);
  // Branch-free select: useG is all ones when g4 did not wrap below zero.
  const useG = (g4 >>> 31) - 1;
  const keepH = ~useG;
  const f0 = <u64>((h0 & keepH) | (g0 & useG));
  const f1 = <u64>((h1 & keepH) | (g1 & useG));
  const f2 = <u64>((h2 & keepH) | (g2 & useG));
  const f3 = <u64>((h3 & keepH) | (g3 & useG));
  const f4 = <u64>((h4 & keepH) | (g4 & useG));
  // Pack the value into four 32-bit words (mod 2^128): f1 sits at bit 26, f2 at 52 = 32 + 20,
  // f3 at 78 = 64 + 14, f4 at 104 = 96 + 8.
  let v: u64 = f0 + (f1 << 26);
  const w0 = v & 0xffffffff;
  v = (v >> 32) + (f2 << 20);
  const w1 = v & 0xffffffff;
  v = (v >> 32) + (f3 << 14);
  const w2 = v & 0xffffffff;
  v = (v >> 32) + (f4 << 8);
  const w3 = v & 0xffffffff;
  // tag = (h + s) mod 2^128
  let acc: u64 = w0 + <u64>load<u32>(PAD, 0);
  store<u32>(out, <u32>acc, 0);
  acc = (acc >> 32) + w1 + <u64>load<u32>(PAD, 4);
  store<u32>(out, <u32>acc, 4);
  acc = (acc >> 32) + w2 + <u64>load<u32>(PAD, 8);
  store<u32>(out, <u32>acc, 8);
  acc = (acc >> 32) + w3 + <u64>load<u32>(PAD, 12);
  store<u32>(out, <u32>acc, 12);
  h0 = 0;
  h1 = 0;
  h2 = 0;
  h3 = 0;
  h4 = 0;
  memory.fill(PAD, 0, 16);
  memory.fill(PENDING, 0, 16);
}

/** One-shot Poly1305 of `length` bytes at `ptr` under the 32-byte one-time `key`, tag to `out`. */
export function poly1305(key: usize, ptr: usize, length: i32, out: usize): void {
  poly1305Init(key);
  poly1305Update(ptr, length);
  poly1305Final(out);
}
