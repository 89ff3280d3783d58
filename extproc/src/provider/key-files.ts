// Session keys that do not change while a command runs: a key file (`--session-key-file`:
// one base64 32-byte key per line, the first seals, all open), then keys given inline
// (`--session-key`), checked and named by id.
import { readFile } from 'node:fs/promises';
import { parseSessionKeyFile, sessionKeyId } from '../session/keys.js';
import type { KeySource, SessionKeyRing } from './key-source.js';

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
