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
import { decodeBase64Bytes, decodeBase64UrlBytes, encodeBase64, encodeBase64Url } from '../encoding/base64';
import { formatEndpoint, normalizeEndpoint, parseEndpointBytes } from '../session/endpoint';
import { SessionKeys } from '../session/keys';
import {
  open,
  OpenedSession,
  openBytes,
  seal,
  sealBytes,
  sealedTokenPtr,
  sealToBuffer,
  TokenStatus,
  tokenStatusName,
} from '../session/token';

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

// ---- encoding/base64.ts -------------------------------------------------------------

export function katEncodeBase64(src: usize, length: i32, dst: usize): i32 {
  return encodeBase64(src, length, dst);
}

export function katEncodeBase64Url(src: usize, length: i32, dst: usize): i32 {
  return encodeBase64Url(src, length, dst);
}

export function katDecodeBase64(src: usize, length: i32, dst: usize, capacity: i32): i32 {
  return decodeBase64Bytes(src, length, dst, capacity);
}

export function katDecodeBase64Url(src: usize, length: i32, dst: usize, capacity: i32): i32 {
  return decodeBase64UrlBytes(src, length, dst, capacity);
}

// ---- session/ -------------------------------------------------------------------------
// Strings cross as UTF-16 code units at (ptr, units), so the tests can pass anything,
// lone surrogates included.

function utf16(ptr: usize, units: i32): string {
  return units <= 0 ? '' : String.UTF16.decodeUnsafe(ptr, (<usize>units) << 1);
}

const KEYS = new SessionKeys();
const OPENED = new OpenedSession();
const NONCE = new StaticArray<u8>(12);

export function katKeysClear(): void {
  KEYS.clear();
}

export function katKeysAddBytes(ptr: usize): bool {
  return KEYS.addBytes(ptr);
}

export function katKeysAddBase64(ptr: usize, units: i32): bool {
  return KEYS.addBase64(utf16(ptr, units));
}

export function katKeysLength(): i32 {
  return KEYS.length;
}

/** Writes key `index`'s id as hex (UTF-16) to `dst`; returns its length in code units. */
export function katKeyIdHex(index: i32, dst: usize): i32 {
  const text = KEYS.idHex(index);
  memory.copy(dst, changetype<usize>(text), (<usize>text.length) << 1);
  return text.length;
}

export function katSeal(
  endpointPtr: usize,
  endpointUnits: i32,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  contextPtr: usize,
  contextUnits: i32,
  noncePtr: usize,
): i32 {
  memory.copy(changetype<usize>(NONCE), noncePtr, 12);
  return sealToBuffer(
    utf16(endpointPtr, endpointUnits),
    issuedAtS,
    lastUsedS,
    expiresAtS,
    KEYS,
    utf16(contextPtr, contextUnits),
    NONCE,
  );
}

/** The string form of seal: its length in code units, copied as UTF-16 to `dst`. */
export function katSealString(
  endpointPtr: usize,
  endpointUnits: i32,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  contextPtr: usize,
  contextUnits: i32,
  noncePtr: usize,
  dst: usize,
): i32 {
  memory.copy(changetype<usize>(NONCE), noncePtr, 12);
  const token = seal(
    utf16(endpointPtr, endpointUnits),
    issuedAtS,
    lastUsedS,
    expiresAtS,
    KEYS,
    utf16(contextPtr, contextUnits),
    NONCE,
  );
  memory.copy(dst, changetype<usize>(token), (<usize>token.length) << 1);
  return token.length;
}

/** sealBytes: the endpoint as ASCII bytes; the token is left at katSealedPtr(). */
export function katSealBytes(
  endpointPtr: usize,
  endpointLength: i32,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  contextPtr: usize,
  contextUnits: i32,
  noncePtr: usize,
): i32 {
  memory.copy(changetype<usize>(NONCE), noncePtr, 12);
  return sealBytes(
    endpointPtr,
    endpointLength,
    issuedAtS,
    lastUsedS,
    expiresAtS,
    KEYS,
    utf16(contextPtr, contextUnits),
    NONCE,
  );
}

export function katSealedPtr(): usize {
  return sealedTokenPtr();
}

export function katOpen(
  tokenPtr: usize,
  tokenUnits: i32,
  contextPtr: usize,
  contextUnits: i32,
  nowS: u64,
): i32 {
  return open(utf16(tokenPtr, tokenUnits), KEYS, utf16(contextPtr, contextUnits), nowS, OPENED);
}

export function katOpenBytes(ptr: usize, length: i32, contextPtr: usize, contextUnits: i32, nowS: u64): i32 {
  return openBytes(ptr, length, KEYS, utf16(contextPtr, contextUnits), nowS, OPENED);
}

export function katOpenedOk(): bool {
  return OPENED.ok;
}

export function katOpenedKeyIndex(): i32 {
  return OPENED.keyIndex;
}

export function katOpenedIssuedAt(): u64 {
  return OPENED.issuedAtS;
}

export function katOpenedLastUsed(): u64 {
  return OPENED.lastUsedS;
}

export function katOpenedExpiresAt(): u64 {
  return OPENED.expiresAtS;
}

export function katOpenedEndpointPtr(): usize {
  return changetype<usize>(OPENED.endpointText);
}

export function katOpenedEndpointLength(): i32 {
  return OPENED.endpointLength;
}

/** OpenedSession.endpoint (the allocating getter), as UTF-16 at `dst`; its length in units. */
export function katOpenedEndpointString(dst: usize): i32 {
  const text = OPENED.endpoint;
  memory.copy(dst, changetype<usize>(text), (<usize>text.length) << 1);
  return text.length;
}

/** tokenStatusName as UTF-16 at `dst`; its length in units. */
export function katStatusName(status: i32, dst: usize): i32 {
  const text = tokenStatusName(<TokenStatus>status);
  memory.copy(dst, changetype<usize>(text), (<usize>text.length) << 1);
  return text.length;
}

/** normalizeEndpoint as UTF-16 at `dst`; its length in units (0 when invalid). */
export function katNormalizeEndpoint(ptr: usize, units: i32, dst: usize): i32 {
  const text = normalizeEndpoint(utf16(ptr, units));
  memory.copy(dst, changetype<usize>(text), (<usize>text.length) << 1);
  return text.length;
}

/** parseEndpointBytes then formatEndpoint: the canonical text (ASCII) at `dst`, or -1. */
export function katEndpointBytes(ptr: usize, length: i32, binaryDst: usize, dst: usize): i32 {
  if (parseEndpointBytes(ptr, length, binaryDst) < 0) return -1;
  return formatEndpoint(binaryDst, dst);
}
