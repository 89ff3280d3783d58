// Test-only entry point: thin exports over the crypto and session-token code so the
// vitest suites can run published known-answer vectors against the compiled wasm.
// Never part of steadfast.wasm. The tests write inputs into `scratch()` and read
// outputs back from linear memory.
import { sha256, sha256Final, sha256Init, sha256Update } from '../crypto/sha256';
import { hmacSha256 } from '../crypto/hmac-sha256';
import { chacha20Block, chacha20Xor } from '../crypto/chacha20';
import { poly1305 } from '../crypto/poly1305';
import { aeadOpen, aeadSeal } from '../crypto/chacha20-poly1305';
import { constantTimeEqual } from '../crypto/constant-time';

const SCRATCH_BYTES: i32 = 1 << 16;
const SCRATCH = new StaticArray<u8>(SCRATCH_BYTES);

/** Start of a 64 KiB buffer the tests own. */
export function scratch(): usize {
  return changetype<usize>(SCRATCH);
}

export function scratchBytes(): i32 {
  return SCRATCH_BYTES;
}

export function katSha256(ptr: usize, length: i32, out: usize): void {
  sha256(ptr, length, out);
}

export function katSha256Init(): void {
  sha256Init();
}

export function katSha256Update(ptr: usize, length: i32): void {
  sha256Update(ptr, length);
}

export function katSha256Final(out: usize): void {
  sha256Final(out);
}

export function katHmacSha256(
  key: usize,
  keyLength: i32,
  message: usize,
  messageLength: i32,
  out: usize,
): void {
  hmacSha256(key, keyLength, message, messageLength, out);
}

export function katChacha20Block(key: usize, counter: u32, nonce: usize, out: usize): void {
  chacha20Block(key, counter, nonce, out);
}

export function katChacha20Xor(
  key: usize,
  counter: u32,
  nonce: usize,
  src: usize,
  dst: usize,
  length: i32,
): void {
  chacha20Xor(key, counter, nonce, src, dst, length);
}

export function katPoly1305(key: usize, ptr: usize, length: i32, out: usize): void {
  poly1305(key, ptr, length, out);
}

export function katAeadSeal(
  key: usize,
  nonce: usize,
  aad: usize,
  aadLength: i32,
  src: usize,
  length: i32,
  dst: usize,
  tag: usize,
): void {
  aeadSeal(key, nonce, aad, aadLength, src, length, dst, tag);
}

export function katAeadOpen(
  key: usize,
  nonce: usize,
  aad: usize,
  aadLength: i32,
  src: usize,
  length: i32,
  tag: usize,
  dst: usize,
): bool {
  return aeadOpen(key, nonce, aad, aadLength, src, length, tag, dst);
}

export function katConstantTimeEqual(a: usize, b: usize, length: i32): bool {
  return constantTimeEqual(a, b, length);
}
