// The pinned endpoint's text forms: the filter (wasm) and the TypeScript twin accept the
// same inputs and print the same canonical text (RFC 5952 for IPv6).
import { randomBytes, randomInt } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatEndpoint, normalizeEndpoint } from '../support/session-endpoint.js';
import { loadKatWasm, type KatWasm } from './kat-wasm.js';
import { SessionWasm } from './session-wasm.js';

let wasm: KatWasm;
let filter: SessionWasm;

beforeAll(async () => {
  wasm = await loadKatWasm();
  filter = new SessionWasm(wasm);
});

afterEach(() => {
  expect(wasm.aborts).toEqual([]);
});

function both(text: string): string | undefined {
  const fromString = filter.normalizeEndpoint(text);
  const fromTs = normalizeEndpoint(text);
  expect(fromTs, `TypeScript on ${JSON.stringify(text)}`).toBe(fromString);
  if (/^[\x20-\x7e]*$/.test(text)) expect(filter.normalizeEndpointBytes(text)).toBe(fromString);
  return fromString;
}

describe('endpoint text', () => {
  const canonical: [string, string][] = [
    ['10.0.3.17:8080', '10.0.3.17:8080'],
    ['0.0.0.0:1', '0.0.0.0:1'],
    ['255.255.255.255:65535', '255.255.255.255:65535'],
    ['[::]:80', '[::]:80'],
    ['[::1]:80', '[::1]:80'],
    ['[1::]:80', '[1::]:80'],
    ['[0:0:0:0:0:0:0:1]:80', '[::1]:80'],
    ['[2001:DB8::0001]:443', '[2001:db8::1]:443'],
    ['[2001:db8:0:0:1:0:0:1]:443', '[2001:db8::1:0:0:1]:443'], // RFC 5952 §4.2.3: first of equal runs
    ['[2001:db8:0:1:1:1:1:1]:443', '[2001:db8:0:1:1:1:1:1]:443'], // §4.2.2: a single zero group stays
    ['[2001:0:0:1:0:0:0:1]:443', '[2001:0:0:1::1]:443'], // §4.2.3: the longest run
    ['[::ffff:192.0.2.128]:80', '[::ffff:192.0.2.128]:80'],
    ['[::FFFF:c000:0280]:80', '[::ffff:192.0.2.128]:80'],
    ['[0000:0000:0000:0000:0000:ffff:255.255.255.255]:65535', '[::ffff:255.255.255.255]:65535'],
    ['[::192.0.2.1]:80', '[::c000:201]:80'],
    ['[1:2:3:4:5:6:7::]:80', '[1:2:3:4:5:6:7:0]:80'],
    ['[::2:3:4:5:6:7:8]:80', '[0:2:3:4:5:6:7:8]:80'],
    ['[1:2:3:4:5:6:1.2.3.4]:80', '[1:2:3:4:5:6:102:304]:80'],
  ];
  it.each(canonical)('%s → %s', (input, expected) => {
    expect(both(input)).toBe(expected);
  });

  const invalid = [
    '',
    ':80',
    '1.2.3.4',
    '1.2.3.4:',
    '1.2.3.4:0',
    '1.2.3.4:65536',
    '1.2.3.4:080',
    '1.2.3.4:+80',
    '1.2.3.4:8 0',
    '01.2.3.4:80',
    '1.2.3:80',
    '1.2.3.4.5:80',
    '256.1.1.1:80',
    '1.2.3.4 :80',
    'localhost:80',
    '::1:80',
    '[::1]',
    '[::1]80',
    '[::1]:',
    '[]:80',
    '[:]:80',
    '[:::]:80',
    '[1::2::3]:80',
    '[:1]:80',
    '[1:]:80',
    '[12345::]:80',
    '[1:2:3:4:5:6:7:8:9]:80',
    '[1:2:3:4:5:6:7]:80',
    '[::1:2:3:4:5:6:7:8]:80',
    '[1:2:3:4:5:6:7:1.2.3.4]:80',
    '[1.2.3.4]:80',
    '[::ffff:1.2.3]:80',
    '[::ffff:01.2.3.4]:80',
    '[1.2.3.4::]:80',
    '[fe80::1%eth0]:80',
    '[::g]:80',
    '[::1]]:80',
    '1.2.3.4:80\u0000',
    '\uff11.2.3.4:80',
    `[${'0:'.repeat(30)}0]:80`,
  ];
  it.each(invalid)('refuses %j', (input) => {
    expect(both(input)).toBeUndefined();
  });

  it('random valid addresses round-trip through Node’s own formatting, and random text never traps', () => {
    for (let i = 0; i < 500; i++) {
      const v6 = randomBytes(16);
      if (i % 3 === 0) v6.fill(0, randomInt(0, 8) * 2, randomInt(8, 17));
      const binary = Buffer.concat([Buffer.from([6]), v6, Buffer.from([0x1f, 0x90])]);
      const text = formatEndpoint(binary)!;
      expect(both(text)).toBe(text);
      // Node's URL parser prints IPv6 the RFC 5952 way too (mapped addresses aside).
      if (!text.startsWith('[::ffff:')) expect(new URL(`http://${text}/`).host).toBe(text);
      const noise = randomBytes(randomInt(0, 70)).toString('latin1');
      both(noise);
      both(`[${noise}]:80`);
      both(`${noise}:80`);
    }
  });
});
