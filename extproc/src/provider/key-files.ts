// Session keys that do not change while a command runs: a key file (`--session-key-file`:
// one base64 32-byte key per line, the first seals and all open — rotation: add the new key
// on top, remove the old one once its tokens have expired; blank lines and `#` comments are
// ignored), then keys given inline (`--session-key`), checked and named by id.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { KeySource, SessionKeyRing } from './key-source.js';

export const SESSION_KEY_BYTES = 32;
export const KEY_ID_BYTES = 4;

/** The first four bytes of SHA-256(key): names the key in a token without revealing it. */
export function sessionKeyId(key: Buffer): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
}

/** The filter's ring holds at most this many keys (filter/assembly/session/keys.ts). */
export const MAX_SESSION_KEYS = 16;

export class SessionKeyFileError extends Error {
  override name = 'SessionKeyFileError';
}

/** A new random 32-byte session key, in standard base64: one line of a key file. */
export function generateSessionKey(): string {
  return randomBytes(SESSION_KEY_BYTES).toString('base64');
}

/**
 * Decodes one key in standard base64 (padding optional, as the filter accepts it), or
 * undefined when the text is not canonical base64 of exactly 32 bytes.
 */
export function decodeSessionKey(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== SESSION_KEY_BYTES) return undefined;
  // Refuse non-zero unused bits, as the filter does: one spelling per key.
  return bytes.toString('base64').replace(/=$/, '') === text.replace(/=$/, '') ? bytes : undefined;
}

/** Parses a key file's text; errors name `file:line`. At least one key is required. */
export function parseSessionKeyFile(text: string, file: string): Buffer[] {
  const keys: Buffer[] = [];
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `${file}:${i + 1}`;
    const key = decodeSessionKey(line);
    if (!key) {
      throw new SessionKeyFileError(
        `${where}: not a session key: expected ${SESSION_KEY_BYTES} random bytes in base64 ` +
          `(44 characters, e.g. from \`openssl rand -base64 32\`)`,
      );
    }
    const id = sessionKeyId(key).toString('hex');
    const earlier = seen.get(key.toString('hex'));
    if (earlier !== undefined) {
      throw new SessionKeyFileError(`${where}: key ${id} repeats the key on line ${earlier}`);
    }
    seen.set(key.toString('hex'), i + 1);
    keys.push(key);
  }
  if (keys.length === 0) throw new SessionKeyFileError(`${file}: no session keys (one base64 key per line)`);
  if (keys.length > MAX_SESSION_KEYS) {
    throw new SessionKeyFileError(
      `${file}: ${keys.length} keys; the filter holds at most ${MAX_SESSION_KEYS}`,
    );
  }
  return keys;
}

/** The keys of a key file's text, checked, with their ids; throws with `source` in the message. */
export function keyRingOf(text: string, source: string): SessionKeyRing {
  const keys = parseSessionKeyFile(text, source);
  return {
    keys: keys.map((k) => k.toString('base64')),
    ids: keys.map((k) => sessionKeyId(k).toString('hex')),
  };
}

export class KeyFileSource implements KeySource {
  readonly description: string;

  constructor(
    private readonly file: string | undefined,
    private readonly inline: readonly string[] = [],
  ) {
    this.description = file ?? '--session-key';
  }

  async start(): Promise<SessionKeyRing> {
    let fromFile: SessionKeyRing = { keys: [], ids: [] };
    if (this.file !== undefined) {
      let text: string;
      try {
        text = await readFile(this.file, 'utf8');
      } catch (e) {
        throw new Error(`cannot read the session key file ${this.file}: ${(e as Error).message}`);
      }
      fromFile = keyRingOf(text, this.file);
    }
    const inline = this.inline.length > 0 ? keyRingOf(this.inline.join('\n'), '--session-key') : undefined;
    return {
      keys: [...fromFile.keys, ...(inline?.keys ?? [])],
      ids: [...fromFile.ids, ...(inline?.ids ?? [])],
    };
  }

  /** The keys of a file are read once, at start. */
  async watch(): Promise<void> {}

  close(): void {}
}
