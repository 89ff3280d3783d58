// filter/assembly/encoding/base64.ts: RFC 4648 §10 vectors, agreement with Node for every
// length, and the strictness the session token relies on (one spelling per byte string).
import { randomBytes, randomInt } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadKatWasm, type KatWasm } from './kat-wasm.js';

let wasm: KatWasm;

beforeAll(async () => {
  wasm = await loadKatWasm();
});

afterEach(() => {
  expect(wasm.aborts).toEqual([]);
  wasm.reset();
});

function encode(bytes: Buffer, url: boolean): string {
  wasm.reset();
  const src = wasm.put(bytes);
  const dst = wasm.alloc(bytes.length * 2 + 8);
  const length = wasm.fn(url ? 'katEncodeBase64Url' : 'katEncodeBase64')(src, bytes.length, dst);
  return wasm.read(dst, length).toString('latin1');
}

function decode(text: string, url: boolean, capacity = 4096): Buffer | undefined {
  wasm.reset();
  const input = Buffer.from(text, 'latin1');
  const src = wasm.put(input);
  const dst = wasm.alloc(capacity + 16);
  const length = wasm.fn(url ? 'katDecodeBase64Url' : 'katDecodeBase64')(src, input.length, dst, capacity);
  return length < 0 ? undefined : wasm.read(dst, length);
}

describe('base64', () => {
  it('RFC 4648 §10 test vectors, both alphabets', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['fooba', 'Zm9vYmE='],
      ['foobar', 'Zm9vYmFy'],
    ];
    for (const [plain, encoded] of vectors) {
      expect(encode(Buffer.from(plain), false)).toBe(encoded);
      expect(encode(Buffer.from(plain), true)).toBe(encoded.replace(/=+$/, ''));
      expect(decode(encoded, false)?.toString()).toBe(plain);
      expect(decode(encoded.replace(/=+$/, ''), false)?.toString()).toBe(plain);
      expect(decode(encoded.replace(/=+$/, ''), true)?.toString()).toBe(plain);
      wasm.reset();
    }
  });

  it('agrees with Node for every length 0-200', () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = randomBytes(length);
      expect(encode(bytes, false)).toBe(bytes.toString('base64'));
      expect(encode(bytes, true)).toBe(bytes.toString('base64url'));
      expect(decode(bytes.toString('base64'), false)).toEqual(bytes);
      expect(decode(bytes.toString('base64url'), true)).toEqual(bytes);
      wasm.reset();
    }
  });

  it('refuses foreign characters, wrong lengths, misplaced padding and non-zero unused bits', () => {
    for (const text of [
      'Zg=',
      'Zg===',
      'Z===',
      '=Zg=',
      'Zm=v',
      'Zh==',
      'Zm9=',
      'Z',
      'Zm9vY',
      'Zm9v\n',
      ' Zm9v',
      'Zm-v',
      'Zm_v',
    ]) {
      expect(decode(text, false), JSON.stringify(text)).toBeUndefined();
    }
    for (const text of ['Zg==', 'Zg=', 'Zh', 'Zm9', 'Z', 'Zm9vY', 'Zm+v', 'Zm/v', 'Zm9v ', '\u00e9']) {
      expect(decode(text, true), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('never writes past the capacity it is given', () => {
    const bytes = randomBytes(30);
    const text = bytes.toString('base64url');
    expect(decode(text, true, 29)).toBeUndefined();
    expect(decode(text, true, 30)).toEqual(bytes);
    wasm.reset();
    const input = wasm.put(Buffer.from(text));
    const dst = wasm.alloc(64);
    new Uint8Array(wasm.memory.buffer, dst, 64).fill(0xee);
    expect(wasm.fn('katDecodeBase64Url')(input, text.length, dst, 29)).toBe(-1);
    expect(wasm.fn('katDecodeBase64Url')(input, text.length, dst, 30)).toBe(30);
    expect(wasm.read(dst + 30, 34)).toEqual(Buffer.alloc(34, 0xee));
  });

  it('random garbage decodes or is refused, never traps', () => {
    for (let i = 0; i < 1000; i++) {
      const text = randomBytes(randomInt(0, 100)).toString('latin1');
      decode(text, i % 2 === 0);
      wasm.reset();
    }
  });
});
