// Reads a session key file (`--session-key-file FILE`: one base64 32-byte key per line, the
// first seals, all open) for the commands that hand keys to the filter's configuration.
import { readFile } from 'node:fs/promises';
import { parseSessionKeyFile } from '../session/keys.js';
import { sessionKeyId } from '../session/token.js';

export interface SessionKeyRing {
  /** Standard base64, as the filter's `sessionKeys` takes them. */
  readonly keys: readonly string[];
  /** Key ids (hex), safe to log: a key itself never is. */
  readonly ids: readonly string[];
}

export async function readSessionKeyFile(file: string): Promise<SessionKeyRing> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the session key file ${file}: ${(e as Error).message}`);
  }
  const keys = parseSessionKeyFile(text, file);
  return {
    keys: keys.map((k) => k.toString('base64')),
    ids: keys.map((k) => sessionKeyId(k).toString('hex')),
  };
}
