// The sealed session token: the filter's codec (AssemblyScript, run as wasm) against its
// TypeScript twin, in both directions, and against everything a client can send.
import { randomBytes, randomInt } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  openSessionToken,
  sealSessionToken,
  SESSION_TOKEN_CHARS,
  type SessionFields,
} from '../support/session-token.js';
import { sessionKeyId } from '../../extproc/src/provider/key-files.js';
import { callGraph, katWasmText, loadKatWasm, type KatWasm } from './kat-wasm.js';
import { SessionWasm, type FilterOpened } from './session-wasm.js';

let wasm: KatWasm;
let filter: SessionWasm;

beforeAll(async () => {
  wasm = await loadKatWasm();
  filter = new SessionWasm(wasm);
});

afterEach(() => {
  expect(wasm.aborts).toEqual([]);
});

const KEY_A = Buffer.from('a'.repeat(64), 'hex');
const KEY_B = Buffer.from('b'.repeat(64), 'hex');
const NONCE = Buffer.from('000102030405060708090a0b', 'hex');
const CONTEXT = 'httproute/default/shop/rule/0';
const NOW = 1_800_000_000;
const FIELDS: SessionFields = {
  endpoint: '10.0.3.17:8080',
  issuedAtS: NOW - 100,
  lastUsedS: NOW - 5,
  expiresAtS: NOW + 3600,
};

function expectOpened(opened: FilterOpened, fields: SessionFields, keyIndex = 0): void {
  expect(opened).toEqual({ status: 'ok', keyIndex, ...fields });
}

describe('token shape', () => {
  it('is 86 base64url characters for IPv4 and IPv6 alike, so its length says nothing', () => {
    filter.setKeys([KEY_A]);
    for (const endpoint of [
      '1.2.3.4:80',
      '255.255.255.255:65535',
      '[::1]:443',
      '[2001:db8:85a3::8a2e:370:7334]:8443',
    ]) {
      const token = filter.seal({ ...FIELDS, endpoint }, CONTEXT, randomBytes(12));
      expect(token).toMatch(/^[A-Za-z0-9_-]{86}$/);
      expect(token!.length).toBe(SESSION_TOKEN_CHARS);
    }
  });

  it('starts with the version and the key id in the clear, and nothing else readable', () => {
    filter.setKeys([KEY_A]);
    const token = filter.seal(FIELDS, CONTEXT, NONCE)!;
    const bytes = Buffer.from(token, 'base64url');
    expect(bytes.length).toBe(64);
    expect(bytes[0]).toBe(1);
    expect(bytes.subarray(1, 5)).toEqual(sessionKeyId(KEY_A));
    expect(bytes.subarray(5, 17)).toEqual(NONCE);
    // The endpoint's address and port bytes appear nowhere in the token.
    expect(bytes.includes(Buffer.from([10, 0, 3, 17]))).toBe(false);
    expect(token).not.toContain('10.0.3.17');
  });

  it('the string and raw-bytes forms equal the buffer form; the key id hex is the one TypeScript computes', () => {
    filter.setKeys([KEY_A, KEY_B]);
    expect(filter.sealString(FIELDS, CONTEXT, NONCE)).toBe(filter.seal(FIELDS, CONTEXT, NONCE));
    expect(filter.sealBytes(FIELDS, CONTEXT, NONCE)).toBe(filter.seal(FIELDS, CONTEXT, NONCE));
    expect(filter.sealBytes({ ...FIELDS, endpoint: '10.0.3.17' }, CONTEXT, NONCE)).toBeUndefined();
    expect(filter.keyIdHex(0)).toBe(sessionKeyId(KEY_A).toString('hex'));
    expect(filter.keyIdHex(1)).toBe(sessionKeyId(KEY_B).toString('hex'));
    expect(filter.keyIdHex(2)).toBe('');
  });

  it('status names match the TypeScript failure reasons', () => {
    const names = Array.from({ length: 8 }, (_, i) => filter.statusName(i));
    expect(names).toEqual([
      'ok',
      'empty',
      'oversized',
      'garbled',
      'unknown-version',
      'unknown-key',
      'forged',
      'expired',
    ]);
  });
});

describe('the filter and the TypeScript twin agree', () => {
  const endpoints = [
    '10.0.3.17:8080',
    '0.0.0.0:1',
    '[::]:80',
    '[::1]:65535',
    '[fe80::1]:443',
    '[2001:db8::1]:8080',
    '[2001:DB8:0:0:0:0:0:1]:8080',
    '[::ffff:192.0.2.1]:80',
    '[1:2:3:4:5:6:7:8]:9',
    '[2001:db8:0:1:1:1:1:1]:1',
  ];

  it.each(endpoints)('byte-identical tokens for %s, opened by the other side', (endpoint) => {
    const fields = { ...FIELDS, endpoint };
    filter.setKeys([KEY_A]);
    const fromFilter = filter.seal(fields, CONTEXT, NONCE);
    const fromTs = sealSessionToken(fields, [KEY_A], CONTEXT, NONCE);
    expect(fromFilter).toBe(fromTs);
    const canonical = { ...fields, endpoint: filter.normalizeEndpoint(endpoint)! };
    expect(openSessionToken(fromFilter!, [KEY_A], CONTEXT, NOW)).toEqual({
      ok: true,
      keyIndex: 0,
      ...canonical,
    });
    expectOpened(filter.open(fromTs, CONTEXT, NOW), canonical);
  });

  it('random sessions, random keys, random nonces, unicode contexts: sealed on one side, opened on the other', () => {
    for (let i = 0; i < 200; i++) {
      const key = randomBytes(32);
      const nonce = randomBytes(12);
      const context = `httproute/ns-${i}/r\u00e9gle/${'\u{1f600}'.repeat(i % 3)}/${'x'.repeat(randomInt(0, 300))}`;
      const v4 = [0, 0, 0, 0].map(() => randomInt(0, 256)).join('.');
      const fields: SessionFields = {
        endpoint:
          i % 2 ? `${v4}:${randomInt(1, 65536)}` : `[2001:db8::${randomInt(1, 65536).toString(16)}]:443`,
        issuedAtS: randomInt(0, 2 ** 32),
        lastUsedS: randomInt(0, 2 ** 32),
        expiresAtS: i % 5 === 0 ? 0 : randomInt(NOW + 1, 2 ** 32),
      };
      filter.setKeys([key]);
      const token = filter.seal(fields, context, nonce)!;
      expect(token).toBe(sealSessionToken(fields, [key], context, nonce));
      expect(openSessionToken(token, [key], context, NOW)).toEqual({ ok: true, keyIndex: 0, ...fields });
      expectOpened(filter.open(token, context, NOW), fields);
      expectOpened(filter.openBytes(Buffer.from(token), context, NOW), fields);
    }
  });

  it('lone surrogates in the context are bound as U+FFFD on both sides', () => {
    filter.setKeys([KEY_A]);
    const context = 'rule-\ud800-\udc00-end';
    const token = filter.seal(FIELDS, context, NONCE)!;
    expect(token).toBe(sealSessionToken(FIELDS, [KEY_A], context, NONCE));
    expect(openSessionToken(token, [KEY_A], 'rule-\ufffd-\ufffd-end', NOW).ok).toBe(true);
  });
});

describe('what a client can do to a token', () => {
  let token: string;
  let bytes: Buffer;

  beforeAll(() => {
    filter.setKeys([KEY_A]);
    token = filter.seal(FIELDS, CONTEXT, NONCE)!;
    bytes = Buffer.from(token, 'base64url');
  });

  it('changing any bit of any byte never opens: version → unknown-version, key id → unknown-key, else forged', () => {
    filter.setKeys([KEY_A]);
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const changed = Buffer.from(bytes);
        changed[i]! ^= 1 << bit;
        const text = changed.toString('base64url');
        const expected = i === 0 ? 'unknown-version' : i < 5 ? 'unknown-key' : 'forged';
        expect(filter.open(text, CONTEXT, NOW).status, `byte ${i} bit ${bit}`).toBe(expected);
        const ts = openSessionToken(text, [KEY_A], CONTEXT, NOW);
        expect(ts.ok ? 'ok' : ts.reason).toBe(expected);
      }
    }
  });

  it('replacing any character with any other never opens', () => {
    filter.setKeys([KEY_A]);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      const other = alphabet[(alphabet.indexOf(token[i]!) + 1 + randomInt(0, 63)) % 64]!;
      const changed = token.slice(0, i) + other + token.slice(i + 1);
      const opened = filter.open(changed, CONTEXT, NOW);
      expect(opened.status, `char ${i}`).not.toBe('ok');
      const ts = openSessionToken(changed, [KEY_A], CONTEXT, NOW);
      expect(ts.ok ? 'ok' : ts.reason).toBe(opened.status);
    }
  });

  it('every truncation and every extension is refused', () => {
    filter.setKeys([KEY_A]);
    for (let length = 0; length < token.length; length++) {
      const cut = token.slice(0, length);
      const status = filter.open(cut, CONTEXT, NOW).status;
      expect(status, `length ${length}`).toBe(length === 0 ? 'empty' : 'garbled');
      const ts = openSessionToken(cut, [KEY_A], CONTEXT, NOW);
      expect(ts.ok ? 'ok' : ts.reason).toBe(status);
    }
    expect(filter.open(`${token}A`, CONTEXT, NOW).status).toBe('garbled');
    expect(filter.open(`${token}AA`, CONTEXT, NOW).status).toBe('garbled');
    expect(filter.open(`${token}AAAA`, CONTEXT, NOW).status).toBe('garbled');
  });

  it('refuses oversized, empty, non-ASCII and malformed base64 with a reason, never a trap', () => {
    filter.setKeys([KEY_A]);
    const cases: [string, string][] = [
      ['', 'empty'],
      ['A'.repeat(8 * 1024), 'oversized'],
      ['A'.repeat(257), 'oversized'],
      ['A'.repeat(256), 'unknown-version'], // decodes to version 0
      [`AQ${'A'.repeat(254)}`, 'garbled'], // version 1, 192 bytes
      [`${token.slice(0, -1)}\u00e9`, 'garbled'],
      [`${token.slice(0, 40)}\u{1f36a}${token.slice(42)}`, 'garbled'],
      [`${token.slice(0, 10)}\ud800${token.slice(11)}`, 'garbled'],
      [`${token.slice(0, 10)}\u0000${token.slice(11)}`, 'garbled'],
      [`${token.slice(0, 10)}+${token.slice(11)}`, 'garbled'],
      [`${token.slice(0, 10)}/${token.slice(11)}`, 'garbled'],
      [`${token}==`, 'garbled'],
      [` ${token}`, 'garbled'],
      [`"${token}"`, 'garbled'],
      ['!!!!', 'garbled'],
      ['A', 'garbled'],
      ['AQ', 'garbled'], // version 1 but far too short
      ['Ag', 'unknown-version'],
      ['AB', 'garbled'], // non-zero unused bits
      [Buffer.concat([Buffer.from([2]), bytes.subarray(1)]).toString('base64url'), 'unknown-version'],
    ];
    for (const [text, reason] of cases) {
      expect(filter.open(text, CONTEXT, NOW).status, JSON.stringify(text.slice(0, 20))).toBe(reason);
      const ts = openSessionToken(text, [KEY_A], CONTEXT, NOW);
      expect(ts.ok ? 'ok' : ts.reason).toBe(reason);
    }
  });

  it('a token for one rule does not open on another', () => {
    filter.setKeys([KEY_A]);
    expect(filter.open(token, 'httproute/default/shop/rule/1', NOW).status).toBe('forged');
    expect(filter.open(token, '', NOW).status).toBe('forged');
    expect(filter.open(token, CONTEXT, NOW).status).toBe('ok');
  });

  it('the raw-bytes entry point gives the same answers as the string one', () => {
    filter.setKeys([KEY_A]);
    expect(filter.openBytes(Buffer.from(token), CONTEXT, NOW)).toEqual(filter.open(token, CONTEXT, NOW));
    expect(filter.openBytes(Buffer.alloc(0), CONTEXT, NOW).status).toBe('empty');
    expect(filter.openBytes(Buffer.alloc(8192, 0x41), CONTEXT, NOW).status).toBe('oversized');
    expect(
      filter.openBytes(Buffer.from([0xc3, 0xa9, ...Buffer.from(token.slice(2))]), CONTEXT, NOW).status,
    ).toBe('garbled');
  });
});

describe('keys and rotation', () => {
  it('a token sealed with the old key opens with [new, old] and reports key 1; new tokens use the new key', () => {
    filter.setKeys([KEY_A]);
    const old = filter.seal(FIELDS, CONTEXT, NONCE)!;
    filter.setKeys([KEY_B, KEY_A]);
    expectOpened(filter.open(old, CONTEXT, NOW), FIELDS, 1);
    const fresh = filter.seal(FIELDS, CONTEXT, NONCE)!;
    expect(Buffer.from(fresh, 'base64url').subarray(1, 5)).toEqual(sessionKeyId(KEY_B));
    expectOpened(filter.open(fresh, CONTEXT, NOW), FIELDS, 0);
    const ts = openSessionToken(old, [KEY_B, KEY_A], CONTEXT, NOW);
    expect(ts).toEqual({ ok: true, keyIndex: 1, ...FIELDS });
  });

  it('a retired key is refused as unknown-key', () => {
    filter.setKeys([KEY_A]);
    const old = filter.seal(FIELDS, CONTEXT, NONCE)!;
    filter.setKeys([KEY_B]);
    expect(filter.open(old, CONTEXT, NOW).status).toBe('unknown-key');
    expect(openSessionToken(old, [KEY_B], CONTEXT, NOW)).toEqual({ ok: false, reason: 'unknown-key' });
    filter.setKeys([]);
    expect(filter.open(old, CONTEXT, NOW).status).toBe('unknown-key');
  });

  it('a different key that happens to share the key id is tried and refused as forged', () => {
    // Same id, different key: simulate by opening a token whose id we graft onto another key's token.
    filter.setKeys([KEY_B]);
    const other = Buffer.from(filter.seal(FIELDS, CONTEXT, NONCE)!, 'base64url');
    sessionKeyId(KEY_A).copy(other, 1);
    filter.setKeys([KEY_A]);
    expect(filter.open(other.toString('base64url'), CONTEXT, NOW).status).toBe('forged');
  });

  it('an empty ring cannot seal; the ring holds at most 16 keys', () => {
    filter.setKeys([]);
    expect(filter.seal(FIELDS, CONTEXT, NONCE)).toBeUndefined();
    expect(filter.sealString(FIELDS, CONTEXT, NONCE)).toBe('');
    const keys = Array.from({ length: 16 }, () => randomBytes(32));
    filter.setKeys(keys);
    expect(filter.keyCount()).toBe(16);
    expect(filter.addBase64Key(randomBytes(32).toString('base64'))).toBe(false);
    expect(filter.keyCount()).toBe(16);
  });

  it('takes keys from configuration in standard base64, exactly 32 bytes, padding optional', () => {
    const key = randomBytes(32);
    const cases: [string, boolean][] = [
      [key.toString('base64'), true],
      [key.toString('base64').replace(/=$/, ''), true],
      [key.toString('base64url'), /[-_]/.test(key.toString('base64url')) ? false : true],
      [randomBytes(31).toString('base64'), false],
      [randomBytes(33).toString('base64'), false],
      [`${key.toString('base64')}\n`, false],
      [` ${key.toString('base64')}`, false],
      ['', false],
      ['not base64 at all!', false],
      // 43 characters whose last one has a non-zero unused bit: not canonical.
      [`${'A'.repeat(42)}B=`, false],
    ];
    for (const [text, accepted] of cases) {
      filter.setKeys([]);
      expect(filter.addBase64Key(text), JSON.stringify(text)).toBe(accepted);
    }
    filter.setKeys([]);
    filter.addBase64Key(key.toString('base64'));
    expect(filter.keyIdHex(0)).toBe(sessionKeyId(key).toString('hex'));
  });
});

describe('times', () => {
  it('opens before expiry, is expired at and after it, and reports the fields either way', () => {
    filter.setKeys([KEY_A]);
    const fields = { ...FIELDS, expiresAtS: NOW };
    const token = filter.seal(fields, CONTEXT, NONCE)!;
    expectOpened(filter.open(token, CONTEXT, NOW - 1), fields);
    expect(filter.open(token, CONTEXT, NOW)).toEqual({ status: 'expired', keyIndex: 0, ...fields });
    expect(filter.open(token, CONTEXT, NOW + 10_000).status).toBe('expired');
    const ts = openSessionToken(token, [KEY_A], CONTEXT, NOW);
    expect(ts).toEqual({ ok: false, reason: 'expired', session: { keyIndex: 0, ...fields } });
  });

  it('expiresAt 0 never expires', () => {
    filter.setKeys([KEY_A]);
    const fields = { ...FIELDS, expiresAtS: 0 };
    const token = filter.seal(fields, CONTEXT, NONCE)!;
    expectOpened(filter.open(token, CONTEXT, 2 ** 32 + 5), fields);
  });

  it('refuses to seal a time past 2^32 - 1 or an endpoint that is not ip:port', () => {
    filter.setKeys([KEY_A]);
    expect(filter.seal({ ...FIELDS, issuedAtS: 2 ** 32 }, CONTEXT, NONCE)).toBeUndefined();
    expect(filter.seal({ ...FIELDS, lastUsedS: 2 ** 32 }, CONTEXT, NONCE)).toBeUndefined();
    expect(filter.seal({ ...FIELDS, expiresAtS: 2 ** 32 }, CONTEXT, NONCE)).toBeUndefined();
    expect(filter.seal({ ...FIELDS, issuedAtS: 2 ** 32 - 1 }, CONTEXT, NONCE)).toBeDefined();
    for (const endpoint of ['', 'shop:80', '10.0.0.1', '10.0.0.1:0', '[::1]', 'http://10.0.0.1:80']) {
      expect(filter.seal({ ...FIELDS, endpoint }, CONTEXT, NONCE), endpoint).toBeUndefined();
      expect(() => sealSessionToken({ ...FIELDS, endpoint }, [KEY_A], CONTEXT, NONCE)).toThrow(/endpoint/);
    }
  });
});

describe('open() never traps (property-style)', () => {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

  function randomInput(valid: string, i: number): string {
    // The empty input once for certain: a random length of 0 comes up in only about 99 runs
    // of 100, and every reason below must be seen in each run.
    if (i === 0) return '';
    switch (i % 6) {
      case 0: // random base64url of random length
        return Array.from({ length: randomInt(0, 300) }, () => ALPHABET[randomInt(0, 64)]).join('');
      case 1: // random bytes read as latin1
        return randomBytes(randomInt(0, 300)).toString('latin1');
      case 2: {
        // random UTF-16 code units, surrogates included
        const units = Array.from({ length: randomInt(0, 300) }, () => randomInt(0, 0x10000));
        return String.fromCharCode(...units);
      }
      case 3: {
        // a valid token with a few random edits
        let text = valid;
        for (let k = randomInt(1, 4); k > 0; k--) {
          const at = randomInt(0, text.length);
          text = text.slice(0, at) + ALPHABET[randomInt(0, 64)] + text.slice(at + randomInt(0, 2));
        }
        return text;
      }
      case 4: // random 64-byte payloads with the right version byte
        return Buffer.concat([Buffer.from([1]), randomBytes(63)]).toString('base64url');
      default: // random 64-byte payloads carrying the real key id
        return Buffer.concat([Buffer.from(valid, 'base64url').subarray(0, 5), randomBytes(59)]).toString(
          'base64url',
        );
    }
  }

  it('3000 random inputs through open() and openBytes(): a reason every time, the same one as TypeScript', () => {
    filter.setKeys([KEY_A, KEY_B]);
    const valid = filter.seal(FIELDS, CONTEXT, NONCE)!;
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const input = randomInput(valid, i);
      const opened = filter.open(input, CONTEXT, NOW);
      seen.add(opened.status);
      if (input !== valid) expect(opened.status).not.toBe('ok');
      const ts = openSessionToken(input, [KEY_A, KEY_B], CONTEXT, NOW);
      expect(ts.ok ? 'ok' : ts.reason, JSON.stringify(input)).toBe(opened.status);
      const raw = Buffer.from(input, 'latin1');
      if (input !== valid) expect(filter.openBytes(raw, CONTEXT, NOW).status).not.toBe('ok');
    }
    expect(wasm.aborts).toEqual([]);
    expect([...seen].sort()).toEqual(
      expect.arrayContaining(['empty', 'forged', 'garbled', 'oversized', 'unknown-key', 'unknown-version']),
    );
  });
});

describe('the per-request path', () => {
  it('open, openBytes, sealToBuffer and sealBytes never reach the allocator or abort', async () => {
    const graph = callGraph(await katWasmText());
    const roots = ['open', 'openBytes', 'sealToBuffer', 'sealBytes'].map(
      (f) => `filter/assembly/session/token/${f}`,
    );
    const reached = new Set<string>();
    const stack = [...roots];
    for (const root of roots) expect(graph.has(root), root).toBe(true);
    while (stack.length > 0) {
      const fn = stack.pop()!;
      if (reached.has(fn)) continue;
      reached.add(fn);
      // The shadow-stack guard aborts only on stack exhaustion, never because of input.
      if (fn === '~stack_check') continue;
      for (const callee of graph.get(fn) ?? []) stack.push(callee);
    }
    // Everything reached is steadfast's own code or one of these leaf built-ins.
    const builtins = new Set([
      '~lib/polyfills/bswap<u16>',
      '~lib/polyfills/bswap<u32>',
      '~lib/rt/common/OBJECT#get:rtSize',
      '~lib/staticarray/StaticArray<u8>#get:length',
      '~lib/string/String#get:length',
      '~stack_check',
    ]);
    expect([...reached].filter((fn) => !fn.startsWith('filter/assembly/') && !builtins.has(fn))).toEqual([]);
    // The walk did find the work: the AEAD and the endpoint code.
    expect(reached).toContain('filter/assembly/crypto/chacha20/chacha20Block');
    expect(reached).toContain('filter/assembly/session/endpoint/formatEndpoint');
  });
});
