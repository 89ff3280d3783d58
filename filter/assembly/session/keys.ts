// The session key ring, built once when the plugin is configured: the first key seals,
// every key opens, so keys rotate by putting a new one first and keeping the old one
// until its tokens have expired. Each key's id — the first four bytes of its SHA-256 —
// is computed here, not per request.
import { sha256 } from '../crypto/sha256';
import { decodeBase64String } from '../encoding/base64';

export const SESSION_KEY_BYTES: i32 = 32;
export const SESSION_KEY_ID_BYTES: i32 = 4;
/** More than anyone rotates through at once; bounds the per-request key search. */
export const MAX_SESSION_KEYS: i32 = 16;

const DIGEST: usize = memory.data(32, 16);
const DECODED: usize = memory.data(32, 16);

export class SessionKeys {
  private readonly material: StaticArray<u8> = new StaticArray<u8>(MAX_SESSION_KEYS * SESSION_KEY_BYTES);
  private readonly ids: StaticArray<u8> = new StaticArray<u8>(MAX_SESSION_KEYS * SESSION_KEY_ID_BYTES);
  private count: i32 = 0;

  /** How many keys the ring holds; 0 means no session can be sealed or opened. */
  get length(): i32 {
    return this.count;
  }

  /** Adds the 32 key bytes at `ptr`. False when the ring already holds MAX_SESSION_KEYS. */
  addBytes(ptr: usize): bool {
    if (this.count >= MAX_SESSION_KEYS) return false;
    const slot = changetype<usize>(this.material) + <usize>(this.count * SESSION_KEY_BYTES);
    memory.copy(slot, ptr, <usize>SESSION_KEY_BYTES);
    sha256(slot, SESSION_KEY_BYTES, DIGEST);
    memory.copy(changetype<usize>(this.ids) + <usize>(this.count * SESSION_KEY_ID_BYTES), DIGEST, 4);
    memory.fill(DIGEST, 0, 32);
    this.count++;
    return true;
  }

  /**
   * Adds a key written in standard base64 (as in the plugin configuration). False when
   * it is not base64, does not decode to exactly 32 bytes, or the ring is full.
   */
  addBase64(text: string): bool {
    // A capacity of 32 refuses anything longer; the length check refuses anything shorter.
    const length = decodeBase64String(text, DECODED, SESSION_KEY_BYTES);
    const added = length == SESSION_KEY_BYTES && this.addBytes(DECODED);
    memory.fill(DECODED, 0, 32);
    return added;
  }

  /** Forgets every key (and overwrites them). */
  clear(): void {
    memory.fill(changetype<usize>(this.material), 0, <usize>(MAX_SESSION_KEYS * SESSION_KEY_BYTES));
    memory.fill(changetype<usize>(this.ids), 0, <usize>(MAX_SESSION_KEYS * SESSION_KEY_ID_BYTES));
    this.count = 0;
  }

  /** The 32 key bytes of key `index`; callers keep 0 <= index < length. */
  keyPtr(index: i32): usize {
    return changetype<usize>(this.material) + <usize>(index * SESSION_KEY_BYTES);
  }

  /** The 4-byte id of key `index`; callers keep 0 <= index < length. */
  idPtr(index: i32): usize {
    return changetype<usize>(this.ids) + <usize>(index * SESSION_KEY_ID_BYTES);
  }

  /** The id as 8 lower-case hex digits, for logs and metrics (never the key itself); "" out of range. */
  idHex(index: i32): string {
    if (index < 0 || index >= this.count) return '';
    let text = '';
    const id = this.idPtr(index);
    for (let i: usize = 0; i < 4; i++) {
      const b = <u32>load<u8>(id + i);
      text += String.fromCharCode(b >>> 4 < 10 ? 48 + (b >>> 4) : 87 + (b >>> 4));
      text += String.fromCharCode((b & 15) < 10 ? 48 + (b & 15) : 87 + (b & 15));
    }
    return text;
  }
}
