// HMAC-SHA256 (RFC 2104 with SHA-256; vectors in RFC 4231). Uses the module-level
// SHA-256 state in sequence (inner hash, then outer), so it allocates nothing.
import { sha256, sha256Final, sha256Init, sha256Update, SHA256_BLOCK_BYTES } from './sha256';

export const HMAC_SHA256_BYTES: i32 = 32;

const PADDED_KEY: usize = memory.data(64, 16);
const INNER_DIGEST: usize = memory.data(32, 16);

function xorKey(value: u8): void {
  for (let i: usize = 0; i < <usize>SHA256_BLOCK_BYTES; i++) {
    store<u8>(PADDED_KEY + i, load<u8>(PADDED_KEY + i) ^ value);
  }
}

/**
 * Writes HMAC-SHA256(key, message) — 32 bytes — to `out`. "Applications that use keys
 * longer than B bytes will first hash the key" (RFC 2104 §2); shorter keys are
 * zero-padded. Negative lengths count as zero. `out` may overlap the inputs.
 */
export function hmacSha256(
  keyPtr: usize,
  keyLength: i32,
  messagePtr: usize,
  messageLength: i32,
  out: usize,
): void {
  if (keyLength < 0) keyLength = 0;
  memory.fill(PADDED_KEY, 0, <usize>SHA256_BLOCK_BYTES);
  if (keyLength > SHA256_BLOCK_BYTES) {
    sha256(keyPtr, keyLength, PADDED_KEY);
  } else {
    memory.copy(PADDED_KEY, keyPtr, <usize>keyLength);
  }
  xorKey(0x36);
  sha256Init();
  sha256Update(PADDED_KEY, SHA256_BLOCK_BYTES);
  sha256Update(messagePtr, messageLength);
  sha256Final(INNER_DIGEST);
  xorKey(0x36 ^ 0x5c);
  sha256Init();
  sha256Update(PADDED_KEY, SHA256_BLOCK_BYTES);
  sha256Update(INNER_DIGEST, 32);
  sha256Final(out);
  memory.fill(PADDED_KEY, 0, <usize>SHA256_BLOCK_BYTES);
  memory.fill(INNER_DIGEST, 0, 32);
}
