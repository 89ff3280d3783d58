// The session key file (`--session-keys <file>`) and key generation.
import { describe, expect, it } from 'vitest';
import {
  decodeSessionKey,
  generateSessionKey,
  MAX_SESSION_KEYS,
  parseSessionKeyFile,
  SessionKeyFileError,
} from '../../extproc/src/provider/key-files.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');

describe('generateSessionKey', () => {
  it('gives 32 random bytes in base64, one line of a key file, different every time', () => {
    const a = generateSessionKey();
    const b = generateSessionKey();
    expect(a).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a, 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(parseSessionKeyFile(`${a}\n${b}\n`, 'keys')).toEqual([
      Buffer.from(a, 'base64'),
      Buffer.from(b, 'base64'),
    ]);
  });
});

describe('parseSessionKeyFile', () => {
  it('reads one key per line in order, skipping blank lines and # comments, CRLF or LF', () => {
    const text = `# rotated 2026-11-01: new key first\r\n\r\n  ${K2}  \r\n# old key, remove after 2026-12-01\n${K1}\n\n`;
    expect(parseSessionKeyFile(text, 'keys.txt')).toEqual([Buffer.alloc(32, 2), Buffer.alloc(32, 1)]);
  });

  it('accepts a key without its = padding', () => {
    expect(parseSessionKeyFile(K1.replace(/=$/, ''), 'k')).toEqual([Buffer.alloc(32, 1)]);
  });

  const bad: [string, string, RegExp][] = [
    ['short key', `${K1}\n${Buffer.alloc(31).toString('base64')}\n`, /^keys\.txt:2: not a session key/],
    ['long key', `# c\n${Buffer.alloc(33).toString('base64')}`, /^keys\.txt:2: not a session key/],
    ['not base64', '\n\nhello world', /^keys\.txt:3: not a session key/],
    ['url alphabet', `${Buffer.alloc(32, 0xfb).toString('base64url')}`, /^keys\.txt:1: not a session key/],
    ['non-canonical last character', `${'A'.repeat(42)}B=`, /^keys\.txt:1: not a session key/],
    ['trailing comment on the line', `${K1} # main`, /^keys\.txt:1: not a session key/],
    ['duplicate', `${K1}\n${K2}\n${K1}`, /^keys\.txt:3: key [0-9a-f]{8} repeats the key on line 1$/],
    ['no keys', '# only comments\n\n', /^keys\.txt: no session keys/],
    ['empty file', '', /^keys\.txt: no session keys/],
    [
      'too many keys',
      Array.from({ length: MAX_SESSION_KEYS + 1 }, () => generateSessionKey()).join('\n'),
      /^keys\.txt: 17 keys; the filter holds at most 16$/,
    ],
  ];
  it.each(bad)('refuses %s, naming file:line', (_name, text, message) => {
    expect(() => parseSessionKeyFile(text, 'keys.txt')).toThrow(SessionKeyFileError);
    expect(() => parseSessionKeyFile(text, 'keys.txt')).toThrow(message);
  });

  it('never puts key material in an error', () => {
    try {
      parseSessionKeyFile(`${K1}\n${K1}`, 'keys.txt');
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain(K1);
      expect(String(error)).not.toContain(Buffer.alloc(32, 1).toString('hex'));
    }
  });
});

describe('decodeSessionKey', () => {
  it('is exactly as strict as the filter', () => {
    expect(decodeSessionKey(K1)).toEqual(Buffer.alloc(32, 1));
    expect(decodeSessionKey(`${K1}=`)).toBeUndefined();
    expect(decodeSessionKey(` ${K1}`)).toBeUndefined();
    expect(decodeSessionKey('')).toBeUndefined();
  });
});
