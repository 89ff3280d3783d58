// AEAD_CHACHA20_POLY1305 (RFC 8439 §2.8). The associated data can be fed in pieces
// (aeadBegin, aeadAddAad..., then aeadSealFinish or aeadOpenFinish), so a caller can
// authenticate a header and a string without first copying them into one buffer.
// Module-level state: one AEAD operation at a time, which is all a wasm VM runs.
import { chacha20Block, chacha20Xor } from './chacha20';
import { constantTimeEqual } from './constant-time';
import { poly1305Final, poly1305Init, poly1305PadToBlock, poly1305Update } from './poly1305';

export const AEAD_KEY_BYTES: i32 = 32;
export const AEAD_NONCE_BYTES: i32 = 12;
export const AEAD_TAG_BYTES: i32 = 16;

const ONE_TIME_KEY: usize = memory.data(64, 16);
const LENGTHS: usize = memory.data(16, 16);
const EXPECTED_TAG: usize = memory.data(16, 16);
const KEY: usize = memory.data(32, 16);
const NONCE: usize = memory.data(16, 16);
let aadLength: u64 = 0;

/** Starts an operation under the 32-byte `key` and 12-byte `nonce` (both copied). */
export function aeadBegin(key: usize, nonce: usize): void {
  memory.copy(KEY, key, 32);
  memory.copy(NONCE, nonce, 12);
  // "the first 32 bytes of the block function output with counter 0" (RFC 8439 §2.6)
  chacha20Block(KEY, 0, NONCE, ONE_TIME_KEY);
  poly1305Init(ONE_TIME_KEY);
  memory.fill(ONE_TIME_KEY, 0, 64);
  aadLength = 0;
}

/** Adds `length` bytes at `ptr` to the associated data; call before finishing. */
export function aeadAddAad(ptr: usize, length: i32): void {
  if (length <= 0) return;
  poly1305Update(ptr, length);
  aadLength += <u64>length;
}

function macCiphertext(ciphertext: usize, length: i32, tagOut: usize): void {
  poly1305PadToBlock();
  poly1305Update(ciphertext, length);
  poly1305PadToBlock();
  store<u64>(LENGTHS, aadLength, 0);
  store<u64>(LENGTHS, <u64>(length > 0 ? length : 0), 8);
  poly1305Update(LENGTHS, 16);
  poly1305Final(tagOut);
}

/** Encrypts `length` bytes at `src` to `dst` (may equal `src`) and writes the 16-byte tag. */
export function aeadSealFinish(src: usize, length: i32, dst: usize, tagOut: usize): void {
  chacha20Xor(KEY, 1, NONCE, src, dst, length);
  macCiphertext(dst, length, tagOut);
  memory.fill(KEY, 0, 32);
}

/**
 * Checks the 16-byte `tag` over the associated data and `length` bytes of ciphertext at
 * `src`; only when it matches decrypts them to `dst` (may equal `src`) and returns true.
 */
export function aeadOpenFinish(src: usize, length: i32, tag: usize, dst: usize): bool {
  macCiphertext(src, length, EXPECTED_TAG);
  const authentic = constantTimeEqual(EXPECTED_TAG, tag, AEAD_TAG_BYTES);
  memory.fill(EXPECTED_TAG, 0, 16);
  if (authentic) chacha20Xor(KEY, 1, NONCE, src, dst, length);
  memory.fill(KEY, 0, 32);
  return authentic;
}
