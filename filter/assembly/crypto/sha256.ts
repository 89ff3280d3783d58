// SHA-256 (FIPS 180-4 §6.2) over raw linear memory. One module-level hashing state:
// a wasm VM runs one callback at a time and nothing here re-enters, so a single
// preallocated state means hashing never allocates.

export const SHA256_DIGEST_BYTES: i32 = 32;
export const SHA256_BLOCK_BYTES: i32 = 64;

// FIPS 180-4 §4.2.2: first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// FIPS 180-4 §5.3.3: the initial hash value H(0).
const IV: usize = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

const STATE: usize = memory.data(32, 16);
const SCHEDULE: usize = memory.data(256, 16);
const PENDING: usize = memory.data(64, 16);
let pendingLength: i32 = 0;
let totalLength: u64 = 0;

function compress(block: usize): void {
  for (let t: usize = 0; t < 16; t++) {
    store<u32>(SCHEDULE + (t << 2), bswap<u32>(load<u32>(block + (t << 2))));
  }
  for (let t: usize = 16; t < 64; t++) {
    const w15 = load<u32>(SCHEDULE + ((t - 15) << 2));
    const w2 = load<u32>(SCHEDULE + ((t - 2) << 2));
    const sigma0 = rotr<u32>(w15, 7) ^ rotr<u32>(w15, 18) ^ (w15 >>> 3);
    const sigma1 = rotr<u32>(w2, 17) ^ rotr<u32>(w2, 19) ^ (w2 >>> 10);
    store<u32>(
      SCHEDULE + (t << 2),
      load<u32>(SCHEDULE + ((t - 16) << 2)) + sigma0 + load<u32>(SCHEDULE + ((t - 7) << 2)) + sigma1,
    );
  }
  let a = load<u32>(STATE, 0);
  let b = load<u32>(STATE, 4);
  let c = load<u32>(STATE, 8);
  let d = load<u32>(STATE, 12);
  let e = load<u32>(STATE, 16);
  let f = load<u32>(STATE, 20);
  let g = load<u32>(STATE, 24);
  let h = load<u32>(STATE, 28);
  for (let t: usize = 0; t < 64; t++) {
    const bigSigma1 = rotr<u32>(e, 6) ^ rotr<u32>(e, 11) ^ rotr<u32>(e, 25);
    const choose = (e & f) ^ (~e & g);
    const t1 = h + bigSigma1 + choose + load<u32>(K + (t << 2)) + load<u32>(SCHEDULE + (t << 2));
    const bigSigma0 = rotr<u32>(a, 2) ^ rotr<u32>(a, 13) ^ rotr<u32>(a, 22);
    const majority = (a & b) ^ (a & c) ^ (b & c);
    const t2 = bigSigma0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  store<u32>(STATE, load<u32>(STATE, 0) + a, 0);
  store<u32>(STATE, load<u32>(STATE, 4) + b, 4);
  store<u32>(STATE, load<u32>(STATE, 8) + c, 8);
  store<u32>(STATE, load<u32>(STATE, 12) + d, 12);
  store<u32>(STATE, load<u32>(STATE, 16) + e, 16);
  store<u32>(STATE, load<u32>(STATE, 20) + f, 20);
  store<u32>(STATE, load<u32>(STATE, 24) + g, 24);
  store<u32>(STATE, load<u32>(STATE, 28) + h, 28);
}

/** Starts a new hash, discarding any unfinished one. */
export function sha256Init(): void {
  memory.copy(STATE, IV, 32);
  pendingLength = 0;
  totalLength = 0;
}

/** Hashes `length` bytes at `ptr`; a length of zero or less adds nothing. */
export function sha256Update(ptr: usize, length: i32): void {
  if (length <= 0) return;
  let remaining = <usize>length;
  totalLength += <u64>remaining;
  if (pendingLength > 0) {
    const room = <usize>(SHA256_BLOCK_BYTES - pendingLength);
    const take = remaining < room ? remaining : room;
    memory.copy(PENDING + <usize>pendingLength, ptr, take);
    pendingLength += <i32>take;
    ptr += take;
    remaining -= take;
    if (pendingLength < SHA256_BLOCK_BYTES) return;
    compress(PENDING);
    pendingLength = 0;
  }
  while (remaining >= 64) {
    compress(ptr);
    ptr += 64;
    remaining -= 64;
  }
  if (remaining > 0) {
    memory.copy(PENDING, ptr, remaining);
    pendingLength = <i32>remaining;
  }
}

/** Pads (FIPS 180-4 §5.1.1), finishes, and writes the 32-byte digest to `out`. */
export function sha256Final(out: usize): void {
  const bitLength = totalLength << 3;
  store<u8>(PENDING + <usize>pendingLength, 0x80);
  pendingLength++;
  if (pendingLength > 56) {
    memory.fill(PENDING + <usize>pendingLength, 0, <usize>(64 - pendingLength));
    compress(PENDING);
    pendingLength = 0;
  }
  memory.fill(PENDING + <usize>pendingLength, 0, <usize>(56 - pendingLength));
  store<u64>(PENDING, bswap<u64>(bitLength), 56);
  compress(PENDING);
  for (let i: usize = 0; i < 32; i += 4) {
    store<u32>(out + i, bswap<u32>(load<u32>(STATE + i)));
  }
  sha256Init();
}

/** One-shot SHA-256 of `length` bytes at `ptr` into 32 bytes at `out` (may overlap the input). */
export function sha256(ptr: usize, length: i32, out: usize): void {
  sha256Init();
  sha256Update(ptr, length);
  sha256Final(out);
}
