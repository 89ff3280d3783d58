// Test-only entry point: thin exports over the crypto and session-token code so the
// vitest suites can run published known-answer vectors against the compiled wasm.
// Never part of steadfast.wasm. The tests write inputs into `scratch()` and read
// outputs back from linear memory.
import { aeadAddAad, aeadBegin, aeadOpenFinish, aeadSealFinish } from '../crypto/chacha20-poly1305';
import { formatEndpoint, normalizeEndpoint, parseEndpointBytes } from '../session/endpoint';
import { SessionKeys } from '../session/keys';
import {
  open,
  OpenedSession,
  openBytes,
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

// The crypto and encoding functions the tests call as they are: exported under a kat name,
// with no wrapper to repeat their parameter lists.
export {
  sha256 as katSha256,
  sha256Init as katSha256Init,
  sha256Update as katSha256Update,
  sha256Final as katSha256Final,
} from '../crypto/sha256';
export { hmacSha256 as katHmacSha256 } from '../crypto/hmac-sha256';
export { chacha20Block as katChacha20Block, chacha20Xor as katChacha20Xor } from '../crypto/chacha20';
export { poly1305 as katPoly1305 } from '../crypto/poly1305';
export { constantTimeEqual as katConstantTimeEqual } from '../crypto/constant-time';
export {
  encodeBase64 as katEncodeBase64,
  encodeBase64Url as katEncodeBase64Url,
  decodeBase64Bytes as katDecodeBase64,
  decodeBase64UrlBytes as katDecodeBase64Url,
} from '../encoding/base64';

/** RFC 8439's one-shot AEAD seal, from the steps the session token uses. */
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
  aeadBegin(key, nonce);
  aeadAddAad(aad, aadLength);
  aeadSealFinish(src, length, dst, tag);
}

/** The one-shot open: true and plaintext at `dst` only when the tag is authentic. */
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
  aeadBegin(key, nonce);
  aeadAddAad(aad, aadLength);
  return aeadOpenFinish(src, length, tag, dst);
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

/** The sealed token as a string ("" when sealing fails): its length in code units, copied as UTF-16 to `dst`. */
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
  const length = sealToBuffer(
    utf16(endpointPtr, endpointUnits),
    issuedAtS,
    lastUsedS,
    expiresAtS,
    KEYS,
    utf16(contextPtr, contextUnits),
    NONCE,
  );
  const token = length < 0 ? '' : String.UTF8.decodeUnsafe(sealedTokenPtr(), <usize>length);
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
