// ChaCha20 (RFC 8439 §2.3–2.4): 256-bit key, 32-bit block counter, 96-bit nonce. The
// block function keeps its sixteen state words in locals, so it touches memory only to
// read the key and nonce and to write the keystream.

export const CHACHA20_KEY_BYTES: i32 = 32;
export const CHACHA20_NONCE_BYTES: i32 = 12;
export const CHACHA20_BLOCK_BYTES: i32 = 64;

const KEYSTREAM: usize = memory.data(64, 16);

/**
 * Writes the 64-byte ChaCha20 block for (key, counter, nonce) to `out` (RFC 8439 §2.3).
 * `key` is 32 bytes, `nonce` 12 bytes.
 */
export function chacha20Block(key: usize, counter: u32, nonce: usize, out: usize): void {
  // "0x61707865, 0x3320646e, 0x79622d32, 0x6b206574" (RFC 8439 §2.3)
  const j0: u32 = 0x61707865;
  const j1: u32 = 0x3320646e;
  const j2: u32 = 0x79622d32;
  const j3: u32 = 0x6b206574;
  const j4 = load<u32>(key, 0);
  const j5 = load<u32>(key, 4);
  const j6 = load<u32>(key, 8);
  const j7 = load<u32>(key, 12);
  const j8 = load<u32>(key, 16);
  const j9 = load<u32>(key, 20);
  const j10 = load<u32>(key, 24);
  const j11 = load<u32>(key, 28);
  const j12 = counter;
  const j13 = load<u32>(nonce, 0);
  const j14 = load<u32>(nonce, 4);
  const j15 = load<u32>(nonce, 8);
  let x0 = j0;
  let x1 = j1;
  let x2 = j2;
  let x3 = j3;
  let x4 = j4;
  let x5 = j5;
  let x6 = j6;
  let x7 = j7;
  let x8 = j8;
  let x9 = j9;
  let x10 = j10;
  let x11 = j11;
  let x12 = j12;
  let x13 = j13;
  let x14 = j14;
  let x15 = j15;
  // Ten double rounds: a column round, then a diagonal round (RFC 8439 §2.3).
  for (let i = 0; i < 10; i++) {
    x0 += x4;
    x12 = rotl<u32>(x12 ^ x0, 16);
    x8 += x12;
    x4 = rotl<u32>(x4 ^ x8, 12);
    x0 += x4;
    x12 = rotl<u32>(x12 ^ x0, 8);
    x8 += x12;
    x4 = rotl<u32>(x4 ^ x8, 7);
    x1 += x5;
    x13 = rotl<u32>(x13 ^ x1, 16);
    x9 += x13;
    x5 = rotl<u32>(x5 ^ x9, 12);
    x1 += x5;
    x13 = rotl<u32>(x13 ^ x1, 8);
    x9 += x13;
    x5 = rotl<u32>(x5 ^ x9, 7);
    x2 += x6;
    x14 = rotl<u32>(x14 ^ x2, 16);
    x10 += x14;
    x6 = rotl<u32>(x6 ^ x10, 12);
    x2 += x6;
    x14 = rotl<u32>(x14 ^ x2, 8);
    x10 += x14;
    x6 = rotl<u32>(x6 ^ x10, 7);
    x3 += x7;
    x15 = rotl<u32>(x15 ^ x3, 16);
    x11 += x15;
    x7 = rotl<u32>(x7 ^ x11, 12);
    x3 += x7;
    x15 = rotl<u32>(x15 ^ x3, 8);
    x11 += x15;
    x7 = rotl<u32>(x7 ^ x11, 7);
    x0 += x5;
    x15 = rotl<u32>(x15 ^ x0, 16);
    x10 += x15;
    x5 = rotl<u32>(x5 ^ x10, 12);
    x0 += x5;
    x15 = rotl<u32>(x15 ^ x0, 8);
    x10 += x15;
    x5 = rotl<u32>(x5 ^ x10, 7);
    x1 += x6;
    x12 = rotl<u32>(x12 ^ x1, 16);
    x11 += x12;
    x6 = rotl<u32>(x6 ^ x11, 12);
    x1 += x6;
    x12 = rotl<u32>(x12 ^ x1, 8);
    x11 += x12;
    x6 = rotl<u32>(x6 ^ x11, 7);
    x2 += x7;
    x13 = rotl<u32>(x13 ^ x2, 16);
    x8 += x13;
    x7 = rotl<u32>(x7 ^ x8, 12);
    x2 += x7;
    x13 = rotl<u32>(x13 ^ x2, 8);
    x8 += x13;
    x7 = rotl<u32>(x7 ^ x8, 7);
    x3 += x4;
    x14 = rotl<u32>(x14 ^ x3, 16);
    x9 += x14;
    x4 = rotl<u32>(x4 ^ x9, 12);
    x3 += x4;
    x14 = rotl<u32>(x14 ^ x3, 8);
    x9 += x14;
    x4 = rotl<u32>(x4 ^ x9, 7);
  }
  store<u32>(out, x0 + j0, 0);
  store<u32>(out, x1 + j1, 4);
  store<u32>(out, x2 + j2, 8);
  store<u32>(out, x3 + j3, 12);
  store<u32>(out, x4 + j4, 16);
  store<u32>(out, x5 + j5, 20);
  store<u32>(out, x6 + j6, 24);
  store<u32>(out, x7 + j7, 28);
  store<u32>(out, x8 + j8, 32);
  store<u32>(out, x9 + j9, 36);
  store<u32>(out, x10 + j10, 40);
  store<u32>(out, x11 + j11, 44);
  store<u32>(out, x12 + j12, 48);
  store<u32>(out, x13 + j13, 52);
  store<u32>(out, x14 + j14, 56);
  store<u32>(out, x15 + j15, 60);
}

/**
 * XORs `length` bytes at `src` with the ChaCha20 keystream starting at block `counter`
 * and writes them to `dst` (RFC 8439 §2.4); encryption and decryption are the same.
 * `dst` may equal `src`. Negative lengths do nothing. The counter wraps past 2^32 - 1
 * blocks (256 GiB), which no caller here comes near.
 */
export function chacha20Xor(
  key: usize,
  counter: u32,
  nonce: usize,
  src: usize,
  dst: usize,
  length: i32,
): void {
  let offset: usize = 0;
  const end = length > 0 ? <usize>length : 0;
  while (offset < end) {
    chacha20Block(key, counter, nonce, KEYSTREAM);
    counter++;
    const left = end - offset;
    const take = left < 64 ? left : 64;
    let i: usize = 0;
    for (; i + 8 <= take; i += 8) {
      store<u64>(dst + offset + i, load<u64>(src + offset + i) ^ load<u64>(KEYSTREAM + i));
    }
    for (; i < take; i++) {
      store<u8>(dst + offset + i, load<u8>(src + offset + i) ^ load<u8>(KEYSTREAM + i));
    }
    offset += take;
  }
  memory.fill(KEYSTREAM, 0, 64);
}
