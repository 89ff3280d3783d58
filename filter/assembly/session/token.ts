// The sealed session token: which backend endpoint a session is pinned to, and when the
// session started, was last used and expires, encrypted and authenticated with
// AEAD_CHACHA20_POLY1305 (RFC 8439) under a session key. docs/session-token.md has the
// format; extproc/src/session/token.ts is the TypeScript twin and must stay identical.
//
//   token  = base64url-nopad( version(1) | keyId(4) | nonce(12) | ciphertext(31) | tag(16) )
//   plain  = issuedAt(u32 BE) | lastUsed(u32 BE) | expiresAt(u32 BE, 0 = none) | endpoint(19)
//   AAD    = version | keyId | UTF-8 of the context (the route rule the session belongs to)
//
// Every token is 64 bytes, 86 characters. Nothing here allocates except `seal` (the
// returned string) and `OpenedSession.endpoint` (when asked). Nothing throws: every
// input, however long or strange, ends in a TokenStatus. One operation at a time, as
// the module-level buffers are shared.
import { aeadAddAad, aeadBegin, aeadOpenFinish, aeadSealFinish } from '../crypto/chacha20-poly1305';
import { decodeBase64UrlBytes, decodeBase64UrlString, encodeBase64Url } from '../encoding/base64';
import {
  ENDPOINT_BYTES,
  ENDPOINT_TEXT_MAX,
  formatEndpoint,
  parseEndpoint,
  parseEndpointBytes,
} from './endpoint';
import { SESSION_KEY_ID_BYTES, SessionKeys } from './keys';

export const SESSION_TOKEN_VERSION: u8 = 1;
export const SESSION_NONCE_BYTES: i32 = 12;
/** Longest token text `open` looks at; longer is Oversized without decoding. */
export const SESSION_TOKEN_MAX_CHARS: i32 = 256;

const HEADER_BYTES: i32 = 1 + SESSION_KEY_ID_BYTES + SESSION_NONCE_BYTES; // 17
const AAD_HEADER_BYTES: i32 = 1 + SESSION_KEY_ID_BYTES; // version and key id
const TAG_BYTES: i32 = 16;
const TIMES_BYTES: i32 = 12;
const PLAINTEXT_BYTES: i32 = TIMES_BYTES + ENDPOINT_BYTES; // 31
export const SESSION_TOKEN_BYTES: i32 = HEADER_BYTES + PLAINTEXT_BYTES + TAG_BYTES; // 64
export const SESSION_TOKEN_CHARS: i32 = 86; // ceil(64 * 4 / 3), unpadded
const DECODE_CAPACITY: i32 = (SESSION_TOKEN_MAX_CHARS / 4) * 3; // 192

const TOKEN: usize = memory.data(192, 16);
const PLAINTEXT: usize = memory.data(32, 16);
const SEALED_TEXT: usize = memory.data(128, 16);
const AAD_CHUNK: usize = memory.data(64, 16);

/** Why a token did or did not open. Metrics label these with `tokenStatusName`. */
export enum TokenStatus {
  Ok = 0,
  /** No token at all. */
  Empty = 1,
  /** More than SESSION_TOKEN_MAX_CHARS characters. */
  Oversized = 2,
  /** Not unpadded base64url, or not the length of a version-1 token. */
  Garbled = 3,
  /** A version byte this filter does not know. */
  UnknownVersion = 4,
  /** Sealed with a key that is not (or no longer) configured. */
  UnknownKey = 5,
  /** The key id matches but the tag does not: altered, or made up. */
  Forged = 6,
  /** Authentic, but its expiry has passed. */
  Expired = 7,
}

/** TokenStatus's metric labels, indexed by its value. */
const TOKEN_STATUS_NAMES: StaticArray<string> = [
  'ok',
  'empty',
  'oversized',
  'garbled',
  'unknown-version',
  'unknown-key',
  'forged',
  'expired',
];

export function tokenStatusName(status: TokenStatus): string {
  const i = <i32>status;
  return i >= 0 && i < TOKEN_STATUS_NAMES.length ? unchecked(TOKEN_STATUS_NAMES[i]) : 'unknown';
}

/** What `open` found. Allocate one and pass it to every call; the fields are overwritten. */
export class OpenedSession {
  status: TokenStatus = TokenStatus.Empty;
  /** Which key of the ring opened the token (0 = the sealing key); -1 when none did. */
  keyIndex: i32 = -1;
  issuedAtS: u64 = 0;
  lastUsedS: u64 = 0;
  /** 0 when the session has no expiry. */
  expiresAtS: u64 = 0;
  /** The pinned endpoint in canonical text, ASCII, endpointLength bytes: hand it to the host as is. */
  readonly endpointText: StaticArray<u8> = new StaticArray<u8>(ENDPOINT_TEXT_MAX);
  endpointLength: i32 = 0;

  get ok(): bool {
    return this.status == TokenStatus.Ok;
  }

  /** The endpoint as a string (allocates); "" unless the token was authentic (Ok or Expired). */
  get endpoint(): string {
    return String.UTF8.decodeUnsafe(changetype<usize>(this.endpointText), <usize>this.endpointLength);
  }

  reset(): void {
    this.status = TokenStatus.Empty;
    this.keyIndex = -1;
    this.issuedAtS = 0;
    this.lastUsedS = 0;
    this.expiresAtS = 0;
    this.endpointLength = 0;
  }
}

/** Feeds the context's UTF-8 (lone surrogates as U+FFFD, like Node's Buffer) to the AEAD's AAD. */
function addContext(context: string): void {
  const units = context.length;
  const chars = changetype<usize>(context);
  let fill: usize = 0;
  for (let i = 0; i < units; i++) {
    let c = <u32>load<u16>(chars + ((<usize>i) << 1));
    if (c - 0xd800 < 0x800) {
      const next = i + 1 < units ? <u32>load<u16>(chars + ((<usize>(i + 1)) << 1)) : 0;
      if (c < 0xdc00 && next - 0xdc00 < 0x400) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    const at = AAD_CHUNK + fill;
    if (c < 0x80) {
      store<u8>(at, <u8>c);
      fill += 1;
    } else if (c < 0x800) {
      store<u8>(at, <u8>(0xc0 | (c >>> 6)), 0);
      store<u8>(at, <u8>(0x80 | (c & 63)), 1);
      fill += 2;
    } else if (c < 0x10000) {
      store<u8>(at, <u8>(0xe0 | (c >>> 12)), 0);
      store<u8>(at, <u8>(0x80 | ((c >>> 6) & 63)), 1);
      store<u8>(at, <u8>(0x80 | (c & 63)), 2);
      fill += 3;
    } else {
      store<u8>(at, <u8>(0xf0 | (c >>> 18)), 0);
      store<u8>(at, <u8>(0x80 | ((c >>> 12) & 63)), 1);
      store<u8>(at, <u8>(0x80 | ((c >>> 6) & 63)), 2);
      store<u8>(at, <u8>(0x80 | (c & 63)), 3);
      fill += 4;
    }
    if (fill > 56) {
      aeadAddAad(AAD_CHUNK, <i32>fill);
      fill = 0;
    }
  }
  if (fill > 0) aeadAddAad(AAD_CHUNK, <i32>fill);
}

/** What sealing needs besides an endpoint: a key, a 12-byte nonce, and times that fit in 32 bits. */
function canSeal(
  keys: SessionKeys,
  nonce: StaticArray<u8>,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
): bool {
  if (keys.length == 0 || nonce.length < SESSION_NONCE_BYTES) return false;
  const max = <u64>u32.MAX_VALUE;
  return issuedAtS <= max && lastUsedS <= max && expiresAtS <= max;
}

/** Seals the endpoint already parsed into PLAINTEXT + TIMES_BYTES. */
function sealParsed(
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  keys: SessionKeys,
  context: string,
  nonce: StaticArray<u8>,
): i32 {
  store<u32>(PLAINTEXT, bswap<u32>(<u32>issuedAtS), 0);
  store<u32>(PLAINTEXT, bswap<u32>(<u32>lastUsedS), 4);
  store<u32>(PLAINTEXT, bswap<u32>(<u32>expiresAtS), 8);
  store<u8>(TOKEN, SESSION_TOKEN_VERSION);
  memory.copy(TOKEN + 1, keys.idPtr(0), <usize>SESSION_KEY_ID_BYTES);
  memory.copy(TOKEN + <usize>AAD_HEADER_BYTES, changetype<usize>(nonce), <usize>SESSION_NONCE_BYTES);
  aeadBegin(keys.keyPtr(0), TOKEN + <usize>AAD_HEADER_BYTES);
  aeadAddAad(TOKEN, AAD_HEADER_BYTES);
  addContext(context);
  const ciphertext = TOKEN + <usize>HEADER_BYTES;
  aeadSealFinish(PLAINTEXT, PLAINTEXT_BYTES, ciphertext, ciphertext + <usize>PLAINTEXT_BYTES);
  memory.fill(PLAINTEXT, 0, <usize>PLAINTEXT_BYTES);
  return encodeBase64Url(TOKEN, SESSION_TOKEN_BYTES, SEALED_TEXT);
}

/**
 * Seals a session into SEALED_TEXT (see sealedTokenPtr): the token's length in ASCII
 * bytes (always SESSION_TOKEN_CHARS), or -1 when the ring is empty, `nonce` is shorter
 * than 12 bytes, the endpoint is not "ip:port"/"[ipv6]:port", or a time is past 2^32-1.
 * `nonce` must be fresh random bytes for every call (e.g. from WASI random_get).
 */
export function sealToBuffer(
  endpoint: string,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  keys: SessionKeys,
  context: string,
  nonce: StaticArray<u8>,
): i32 {
  if (!canSeal(keys, nonce, issuedAtS, lastUsedS, expiresAtS)) return -1;
  if (parseEndpoint(endpoint, PLAINTEXT + <usize>TIMES_BYTES) < 0) return -1;
  return sealParsed(issuedAtS, lastUsedS, expiresAtS, keys, context, nonce);
}

/**
 * sealToBuffer with the endpoint given as `endpointLength` ASCII bytes at `endpointPtr`: the
 * same parameters but the endpoint's, so a caller that holds bytes makes no string.
 */
export function sealBytes(
  endpointPtr: usize,
  endpointLength: i32,
  issuedAtS: u64,
  lastUsedS: u64,
  expiresAtS: u64,
  keys: SessionKeys,
  context: string,
  nonce: StaticArray<u8>,
): i32 {
  if (!canSeal(keys, nonce, issuedAtS, lastUsedS, expiresAtS)) return -1;
  if (parseEndpointBytes(endpointPtr, endpointLength, PLAINTEXT + <usize>TIMES_BYTES) < 0) return -1;
  return sealParsed(issuedAtS, lastUsedS, expiresAtS, keys, context, nonce);
}

/** Where sealToBuffer leaves the token text; valid until the next seal. */
export function sealedTokenPtr(): usize {
  return SEALED_TEXT;
}

function openDecoded(
  decoded: i32,
  keys: SessionKeys,
  context: string,
  nowS: u64,
  out: OpenedSession,
): TokenStatus {
  if (decoded < 0) return TokenStatus.Garbled;
  if (load<u8>(TOKEN) != SESSION_TOKEN_VERSION) return TokenStatus.UnknownVersion;
  if (decoded != SESSION_TOKEN_BYTES) return TokenStatus.Garbled;
  let idMatched = false;
  let opened = -1;
  const ciphertext = TOKEN + <usize>HEADER_BYTES;
  for (let i = 0; i < keys.length; i++) {
    // Key ids are not secret: a plain compare picks the candidate keys.
    if (load<u32>(keys.idPtr(i)) != load<u32>(TOKEN, 1)) continue;
    idMatched = true;
    aeadBegin(keys.keyPtr(i), TOKEN + <usize>AAD_HEADER_BYTES);
    aeadAddAad(TOKEN, AAD_HEADER_BYTES);
    addContext(context);
    if (aeadOpenFinish(ciphertext, PLAINTEXT_BYTES, ciphertext + <usize>PLAINTEXT_BYTES, PLAINTEXT)) {
      opened = i;
      break;
    }
  }
  if (opened < 0) return idMatched ? TokenStatus.Forged : TokenStatus.UnknownKey;
  const textLength = formatEndpoint(PLAINTEXT + <usize>TIMES_BYTES, changetype<usize>(out.endpointText));
  const issuedAt = <u64>bswap<u32>(load<u32>(PLAINTEXT, 0));
  const lastUsed = <u64>bswap<u32>(load<u32>(PLAINTEXT, 4));
  const expiresAt = <u64>bswap<u32>(load<u32>(PLAINTEXT, 8));
  memory.fill(PLAINTEXT, 0, <usize>PLAINTEXT_BYTES);
  // Authentic yet malformed means a sealer bug, not a client: still no session.
  if (textLength < 0) return TokenStatus.Garbled;
  out.endpointLength = textLength;
  out.keyIndex = opened;
  out.issuedAtS = issuedAt;
  out.lastUsedS = lastUsed;
  out.expiresAtS = expiresAt;
  if (expiresAt != 0 && nowS >= expiresAt) return TokenStatus.Expired;
  return TokenStatus.Ok;
}

/**
 * Opens a token read from a cookie or header. `context` must be the one it was sealed
 * with (the route rule); `nowS` is the current time in seconds since the epoch. The
 * result is written to `out` and its status returned.
 */
export function open(
  token: string,
  keys: SessionKeys,
  context: string,
  nowS: u64,
  out: OpenedSession,
): TokenStatus {
  out.reset();
  let status: TokenStatus;
  if (token.length == 0) status = TokenStatus.Empty;
  else if (token.length > SESSION_TOKEN_MAX_CHARS) status = TokenStatus.Oversized;
  else status = openDecoded(decodeBase64UrlString(token, TOKEN, DECODE_CAPACITY), keys, context, nowS, out);
  out.status = status;
  return status;
}

/** Like `open`, for a token given as `length` bytes at `ptr` (e.g. a header value the host wrote). */
export function openBytes(
  ptr: usize,
  length: i32,
  keys: SessionKeys,
  context: string,
  nowS: u64,
  out: OpenedSession,
): TokenStatus {
  out.reset();
  let status: TokenStatus;
  if (length <= 0) status = TokenStatus.Empty;
  else if (length > SESSION_TOKEN_MAX_CHARS) status = TokenStatus.Oversized;
  else
    status = openDecoded(decodeBase64UrlBytes(ptr, length, TOKEN, DECODE_CAPACITY), keys, context, nowS, out);
  out.status = status;
  return status;
}
