// The sealed session token, TypeScript twin of filter/assembly/session/token.ts (the
// filter's codec is the one in the request path; this one lets tests mint and read
// tokens). The two must produce identical tokens for identical inputs; the suite in
// tests/filter/session-token.test.ts checks it both ways. Format: docs/session-token.md.
//
//   token  = base64url-nopad( version(1) | keyId(4) | nonce(12) | ciphertext(31) | tag(16) )
//   plain  = issuedAt(u32 BE) | lastUsed(u32 BE) | expiresAt(u32 BE, 0 = none) | endpoint(19)
//   AAD    = version | keyId | UTF-8 of the context (the route rule the session belongs to)
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ENDPOINT_BYTES, formatEndpoint, parseEndpoint } from './session-endpoint.js';
import { KEY_ID_BYTES, SESSION_KEY_BYTES, sessionKeyId } from '../../extproc/src/provider/key-files.js';

export const SESSION_TOKEN_VERSION = 1;
export const SESSION_NONCE_BYTES = 12;
export const SESSION_TOKEN_MAX_CHARS = 256;
export const SESSION_TOKEN_BYTES = 64;
export const SESSION_TOKEN_CHARS = 86;

const AAD_HEADER_BYTES = 1 + KEY_ID_BYTES;
const HEADER_BYTES = AAD_HEADER_BYTES + SESSION_NONCE_BYTES;
const TIMES_BYTES = 12;
const PLAINTEXT_BYTES = TIMES_BYTES + ENDPOINT_BYTES;
const TAG_BYTES = 16;
const MAX_SECONDS = 0xffff_ffff;

/** The filter's TokenStatus names, which are also its metric labels. */
export type SessionTokenFailure =
  'empty' | 'oversized' | 'garbled' | 'unknown-version' | 'unknown-key' | 'forged' | 'expired';

export interface SessionFields {
  /** "ip:port" or "[ipv6]:port"; opened tokens give it in canonical form. */
  endpoint: string;
  issuedAtS: number;
  lastUsedS: number;
  /** 0 = no expiry. */
  expiresAtS: number;
}

export interface OpenedSessionToken extends SessionFields {
  ok: true;
  /** Which key of the list opened it (0 = the sealing key). */
  keyIndex: number;
}

export interface RefusedSessionToken {
  ok: false;
  reason: SessionTokenFailure;
  /** Present when the token was authentic but expired. */
  session?: SessionFields & { keyIndex: number };
}

export class SessionTokenError extends Error {
  override name = 'SessionTokenError';
}

function aad(header: Buffer, context: string): Buffer {
  return Buffer.concat([header.subarray(0, AAD_HEADER_BYTES), Buffer.from(context, 'utf8')]);
}

function seconds(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_SECONDS) {
    throw new SessionTokenError(`${field}: ${value} is not an integer in 0-${MAX_SECONDS}`);
  }
  return value;
}

/**
 * Seals a session with the first key of `keys`. Throws SessionTokenError for an empty
 * key list, a key that is not 32 bytes, a bad endpoint or time, or a nonce that is not
 * 12 bytes; `nonce` defaults to fresh random bytes and is a parameter only for tests.
 */
export function sealSessionToken(
  fields: SessionFields,
  keys: readonly Buffer[],
  context: string,
  nonce: Buffer = randomBytes(SESSION_NONCE_BYTES),
): string {
  const key = keys[0];
  if (!key || key.length !== SESSION_KEY_BYTES) {
    throw new SessionTokenError(`the sealing key must be ${SESSION_KEY_BYTES} bytes`);
  }
  if (nonce.length !== SESSION_NONCE_BYTES) {
    throw new SessionTokenError(`the nonce must be ${SESSION_NONCE_BYTES} bytes`);
  }
  const endpoint = parseEndpoint(fields.endpoint);
  if (!endpoint) throw new SessionTokenError(`endpoint: "${fields.endpoint}" is not ip:port or [ipv6]:port`);
  const plaintext = Buffer.alloc(PLAINTEXT_BYTES);
  plaintext.writeUInt32BE(seconds('issuedAtS', fields.issuedAtS), 0);
  plaintext.writeUInt32BE(seconds('lastUsedS', fields.lastUsedS), 4);
  plaintext.writeUInt32BE(seconds('expiresAtS', fields.expiresAtS), 8);
  endpoint.copy(plaintext, TIMES_BYTES);
  const header = Buffer.concat([Buffer.from([SESSION_TOKEN_VERSION]), sessionKeyId(key), nonce]);
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(header, context), { plaintextLength: PLAINTEXT_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

/** Strict unpadded base64url: the decoded bytes, or undefined for anything else (Node's decoder is lenient). */
function decodeBase64Url(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** Opens a token; never throws for any token text. `nowS` is seconds since the epoch. */
export function openSessionToken(
  token: string,
  keys: readonly Buffer[],
  context: string,
  nowS: number,
): OpenedSessionToken | RefusedSessionToken {
  const refuse = (reason: SessionTokenFailure): RefusedSessionToken => ({ ok: false, reason });
  if (token.length === 0) return refuse('empty');
  if (token.length > SESSION_TOKEN_MAX_CHARS) return refuse('oversized');
  const bytes = decodeBase64Url(token);
  if (!bytes) return refuse('garbled');
  if (bytes[0] !== SESSION_TOKEN_VERSION) return refuse('unknown-version');
  if (bytes.length !== SESSION_TOKEN_BYTES) return refuse('garbled');
  const keyId = bytes.subarray(1, AAD_HEADER_BYTES);
  const nonce = bytes.subarray(AAD_HEADER_BYTES, HEADER_BYTES);
  const ciphertext = bytes.subarray(HEADER_BYTES, HEADER_BYTES + PLAINTEXT_BYTES);
  const tag = bytes.subarray(HEADER_BYTES + PLAINTEXT_BYTES);
  let idMatched = false;
  for (let keyIndex = 0; keyIndex < keys.length; keyIndex++) {
    const key = keys[keyIndex]!;
    if (key.length !== SESSION_KEY_BYTES || !sessionKeyId(key).equals(keyId)) continue;
    idMatched = true;
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(bytes, context), { plaintextLength: PLAINTEXT_BYTES });
      decipher.setAuthTag(tag);
      plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      continue; // the tag did not verify under this key
    }
    const endpoint = formatEndpoint(plaintext.subarray(TIMES_BYTES));
    if (endpoint === undefined) return refuse('garbled');
    const session = {
      endpoint,
      issuedAtS: plaintext.readUInt32BE(0),
      lastUsedS: plaintext.readUInt32BE(4),
      expiresAtS: plaintext.readUInt32BE(8),
      keyIndex,
    };
    if (session.expiresAtS !== 0 && nowS >= session.expiresAtS)
      return { ok: false, reason: 'expired', session };
    return { ok: true, ...session };
  }
  return refuse(idMatched ? 'forged' : 'unknown-key');
}
