// Known-answer tests for the filter's crypto primitives (filter/assembly/crypto/), run
// against the compiled wasm. Vectors: FIPS 180-2 Appendix B (SHA-256), RFC 4231 §4
// (HMAC-SHA256), RFC 8439 §2.3.2, §2.4.2, §2.5.2, §2.6.2, §2.8.2, A.3 and A.5.
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hex, loadKatWasm, type KatWasm } from './kat-wasm.js';

let wasm: KatWasm;

beforeAll(async () => {
  wasm = await loadKatWasm();
});

afterEach(() => {
  expect(wasm.aborts).toEqual([]);
  wasm.reset();
});

function sha256(message: Uint8Array): string {
  const input = wasm.put(message);
  const out = wasm.alloc(32);
  wasm.fn('katSha256')(input, message.length, out);
  return wasm.read(out, 32).toString('hex');
}

function hmacSha256(key: Uint8Array, message: Uint8Array): string {
  const k = wasm.put(key);
  const m = wasm.put(message);
  const out = wasm.alloc(32);
  wasm.fn('katHmacSha256')(k, key.length, m, message.length, out);
  return wasm.read(out, 32).toString('hex');
}

function chacha20Block(key: Buffer, counter: number, nonce: Buffer): Buffer {
  const k = wasm.put(key);
  const n = wasm.put(nonce);
  const out = wasm.alloc(64);
  wasm.fn('katChacha20Block')(k, counter, n, out);
  return wasm.read(out, 64);
}

function chacha20(key: Buffer, counter: number, nonce: Buffer, input: Buffer): Buffer {
  const k = wasm.put(key);
  const n = wasm.put(nonce);
  const src = wasm.put(input);
  const dst = wasm.alloc(input.length);
  wasm.fn('katChacha20Xor')(k, counter, n, src, dst, input.length);
  return wasm.read(dst, input.length);
}

function poly1305(key: Buffer, message: Buffer): string {
  const k = wasm.put(key);
  const m = wasm.put(message);
  const out = wasm.alloc(16);
  wasm.fn('katPoly1305')(k, m, message.length, out);
  return wasm.read(out, 16).toString('hex');
}

function aeadSeal(key: Buffer, nonce: Buffer, aad: Buffer, plaintext: Buffer) {
  const k = wasm.put(key);
  const n = wasm.put(nonce);
  const a = wasm.put(aad);
  const src = wasm.put(plaintext);
  const dst = wasm.alloc(plaintext.length);
  const tag = wasm.alloc(16);
  wasm.fn('katAeadSeal')(k, n, a, aad.length, src, plaintext.length, dst, tag);
  return { ciphertext: wasm.read(dst, plaintext.length), tag: wasm.read(tag, 16) };
}

function aeadOpen(key: Buffer, nonce: Buffer, aad: Buffer, ciphertext: Buffer, tag: Buffer) {
  const k = wasm.put(key);
  const n = wasm.put(nonce);
  const a = wasm.put(aad);
  const src = wasm.put(ciphertext);
  const t = wasm.put(tag);
  const dst = wasm.alloc(ciphertext.length);
  const ok = wasm.fn('katAeadOpen')(k, n, a, aad.length, src, ciphertext.length, t, dst) === 1;
  return { ok, plaintext: wasm.read(dst, ciphertext.length) };
}

const SEQUENTIAL_KEY = hex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f');
const SUNSCREEN = Buffer.from(
  "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
);
const IETF_CONTRIBUTION = Buffer.from(
  'Any submission to the IETF intended by the Contributor for publication as all or part of an IETF ' +
    'Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an ' +
    '"IETF Contribution". Such statements include oral statements in IETF sessions, as well as written and ' +
    'electronic communications made at any time or place, which are addressed to',
);
const JABBERWOCKY = Buffer.from(
  "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\n" +
    'And the mome raths outgrabe.',
);

describe('the test module', () => {
  it('imports nothing but env.abort (no Date.now, no Math.random, no host calls)', () => {
    expect(wasm.importNames).toEqual(['env.abort']);
  });
});

describe('SHA-256 (FIPS 180-2 Appendix B)', () => {
  it('B.1 "abc"', () => {
    expect(sha256(Buffer.from('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('B.2 the 448-bit message', () => {
    expect(sha256(Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('B.3 one million "a", fed in uneven pieces', () => {
    const chunk = Buffer.alloc(9_973, 'a');
    const input = wasm.put(chunk);
    const out = wasm.alloc(32);
    wasm.fn('katSha256Init')();
    let left = 1_000_000;
    let piece = 1;
    while (left > 0) {
      const take = Math.min(left, piece, chunk.length);
      wasm.fn('katSha256Update')(input, take);
      left -= take;
      piece = (piece * 7 + 3) % chunk.length || 1;
    }
    wasm.fn('katSha256Final')(out);
    expect(wasm.read(out, 32).toString('hex')).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
  });

  it('the empty message, and every length around the padding boundary, agree with node:crypto', () => {
    expect(sha256(Buffer.alloc(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    for (let length = 0; length <= 200; length++) {
      const message = randomBytes(length);
      expect(sha256(message)).toBe(createHash('sha256').update(message).digest('hex'));
      wasm.reset();
    }
  });
});

describe('HMAC-SHA256 (RFC 4231 §4)', () => {
  const cases: [string, Buffer, Buffer, string][] = [
    [
      '4.2 test case 1',
      Buffer.alloc(20, 0x0b),
      Buffer.from('Hi There'),
      'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    ],
    [
      '4.3 test case 2 (key shorter than the output)',
      Buffer.from('Jefe'),
      Buffer.from('what do ya want for nothing?'),
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    ],
    [
      '4.4 test case 3',
      Buffer.alloc(20, 0xaa),
      Buffer.alloc(50, 0xdd),
      '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe',
    ],
    [
      '4.5 test case 4',
      hex('0102030405060708090a0b0c0d0e0f10111213141516171819'),
      Buffer.alloc(50, 0xcd),
      '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b',
    ],
    [
      '4.7 test case 6 (key larger than the block)',
      Buffer.alloc(131, 0xaa),
      Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'),
      '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    ],
    [
      '4.8 test case 7 (key and data larger than the block)',
      Buffer.alloc(131, 0xaa),
      Buffer.from(
        'This is a test using a larger than block-size key and a larger than block-size data. ' +
          'The key needs to be hashed before being used by the HMAC algorithm.',
      ),
      '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    ],
  ];
  it.each(cases)('%s', (_name, key, data, expected) => {
    expect(hmacSha256(key, data)).toBe(expected);
  });

  it('4.6 test case 5 (output truncated to 128 bits)', () => {
    const mac = hmacSha256(Buffer.alloc(20, 0x0c), Buffer.from('Test With Truncation'));
    expect(mac.slice(0, 32)).toBe('a3b6167473100ee06e0c796c2955552b');
  });

  it('agrees with node:crypto for keys of 0-130 bytes', () => {
    for (let length = 0; length <= 130; length += 1) {
      const key = randomBytes(length);
      const message = randomBytes(length * 3);
      expect(hmacSha256(key, message)).toBe(createHmac('sha256', key).update(message).digest('hex'));
      wasm.reset();
    }
  });
});

describe('ChaCha20 (RFC 8439)', () => {
  it('§2.3.2 block function', () => {
    const block = chacha20Block(SEQUENTIAL_KEY, 1, hex('000000090000004a00000000'));
    expect(block.toString('hex')).toBe(
      '10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e' +
        'd2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e',
    );
  });

  it('§2.4.2 encryption of the sunscreen text, and decryption back', () => {
    const nonce = hex('000000000000004a00000000');
    const ciphertext = chacha20(SEQUENTIAL_KEY, 1, nonce, SUNSCREEN);
    expect(ciphertext.toString('hex')).toBe(
      '6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b' +
        'f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8' +
        '07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736' +
        '5af90bbf74a35be6b40b8eedf2785e42874d',
    );
    wasm.reset();
    expect(chacha20(SEQUENTIAL_KEY, 1, nonce, ciphertext)).toEqual(SUNSCREEN);
  });

  it('A.2 test vectors 1-3', () => {
    expect(chacha20(Buffer.alloc(32), 0, Buffer.alloc(12), Buffer.alloc(64)).toString('hex')).toBe(
      '76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7' +
        'da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586',
    );
    const key2 = hex('0000000000000000000000000000000000000000000000000000000000000001');
    const nonce2 = hex('000000000000000000000002');
    expect(chacha20(key2, 1, nonce2, IETF_CONTRIBUTION).toString('hex')).toBe(
      'a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec' +
        '2a97948bd3722915c8f3d337f7d370050e9e96d647b7c39f56e031ca5eb6250d' +
        '4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e527950' +
        '42bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85a' +
        'd00f8449ed8f72d0d662ab052691ca66424bc86d2df80ea41f43abf937d3259d' +
        'c4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b' +
        '0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6c' +
        'cc3aaf9f3979c92b3720fc88dc95ed84a1be059c6499b9fda236e7e818b04b0b' +
        'c39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f' +
        '5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e6' +
        '98ced759c3ff9b6477338f3da4f9cd8514ea9982ccafb341b2384dd902f3d1ab' +
        '7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221',
    );
    const key3 = hex('1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0');
    expect(chacha20(key3, 42, nonce2, JABBERWOCKY).toString('hex')).toBe(
      '62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf' +
        '166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb' +
        'f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77' +
        '04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1',
    );
  });

  it('agrees with node:crypto at every length up to 300 bytes', () => {
    for (let length = 0; length <= 300; length += 7) {
      const key = randomBytes(32);
      const nonce = randomBytes(12);
      const input = randomBytes(length);
      // OpenSSL's chacha20 IV is the 32-bit little-endian counter followed by the nonce.
      const iv = Buffer.concat([Buffer.from([5, 0, 0, 0]), nonce]);
      const expected = createCipheriv('chacha20', key, iv).update(input);
      expect(chacha20(key, 5, nonce, input)).toEqual(expected);
      wasm.reset();
    }
  });
});

describe('Poly1305 (RFC 8439)', () => {
  it('§2.5.2 "Cryptographic Forum Research Group"', () => {
    const key = hex('85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b');
    expect(poly1305(key, Buffer.from('Cryptographic Forum Research Group'))).toBe(
      'a8061dc1305136c6c22b8baf0c0127a9',
    );
  });

  const vectors: [string, string, Buffer, string][] = [
    ['A.3 #1 all zero', '00'.repeat(32), Buffer.alloc(64), '00000000000000000000000000000000'],
    [
      'A.3 #2 r = 0',
      '00'.repeat(16) + '36e5f6b5c5e06070f0efca96227a863e',
      IETF_CONTRIBUTION,
      '36e5f6b5c5e06070f0efca96227a863e',
    ],
    [
      'A.3 #3 s = 0',
      '36e5f6b5c5e06070f0efca96227a863e' + '00'.repeat(16),
      IETF_CONTRIBUTION,
      'f3477e7cd95417af89a6b8794c310cf0',
    ],
    [
      'A.3 #4',
      '1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0',
      JABBERWOCKY,
      '4541669a7eaaee61e708dc7cbcc5eb62',
    ],
    [
      'A.3 #5 partially reduced result not fully reduced',
      '02' + '00'.repeat(31),
      hex('ff'.repeat(16)),
      '03000000000000000000000000000000',
    ],
    [
      'A.3 #6 adding s overflows 2^128',
      '02' + '00'.repeat(15) + 'ff'.repeat(16),
      hex('02' + '00'.repeat(15)),
      '03000000000000000000000000000000',
    ],
    [
      'A.3 #7 all-ones limb with carry',
      '01' + '00'.repeat(31),
      hex('ff'.repeat(16) + 'f0' + 'ff'.repeat(15) + '11' + '00'.repeat(15)),
      '05000000000000000000000000000000',
    ],
    [
      'A.3 #8 result exactly 2^130-5',
      '01' + '00'.repeat(31),
      hex('ff'.repeat(16) + 'fb' + 'fe'.repeat(15) + '01'.repeat(16)),
      '00000000000000000000000000000000',
    ],
    [
      'A.3 #9 result exactly 2^130-6',
      '02' + '00'.repeat(31),
      hex('fd' + 'ff'.repeat(15)),
      'faffffffffffffffffffffffffffffff',
    ],
    [
      'A.3 #10 131-bit intermediate',
      '01000000000000000400000000000000' + '00'.repeat(16),
      hex(
        'e33594d7505e43b90000000000000000' +
          '3394d7505e4379cd0100000000000000' +
          '00000000000000000000000000000000' +
          '01000000000000000000000000000000',
      ),
      '14000000000000005500000000000000',
    ],
    [
      'A.3 #11 131-bit final result',
      '01000000000000000400000000000000' + '00'.repeat(16),
      hex('e33594d7505e43b90000000000000000' + '3394d7505e4379cd0100000000000000' + '00'.repeat(16)),
      '13000000000000000000000000000000',
    ],
  ];
  it.each(vectors)('%s', (_name, key, message, tag) => {
    expect(poly1305(hex(key), message)).toBe(tag);
  });

  // The RFC 8439 §2.5.1 algorithm, literally, with BigInt: the reference for extreme limbs.
  function referencePoly1305(key: Buffer, message: Buffer): string {
    const le = (b: Buffer) => BigInt(`0x${Buffer.from(b).reverse().toString('hex') || '0'}`);
    const r = le(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn;
    const s = le(key.subarray(16, 32));
    const p = (1n << 130n) - 5n;
    let accumulator = 0n;
    for (let i = 0; i < message.length; i += 16) {
      const block = message.subarray(i, i + 16);
      const n = le(block) + (1n << BigInt(8 * block.length));
      accumulator = ((accumulator + n) * r) % p;
    }
    const tag = (accumulator + s) & ((1n << 128n) - 1n);
    return Buffer.from(tag.toString(16).padStart(32, '0'), 'hex').reverse().toString('hex');
  }

  it('agrees with the RFC algorithm in BigInt for extreme keys and messages of every length 0-300', () => {
    const keys = [
      Buffer.alloc(32, 0xff),
      Buffer.concat([Buffer.alloc(16, 0xff), Buffer.alloc(16, 0)]),
      Buffer.concat([Buffer.alloc(16, 0), Buffer.alloc(16, 0xff)]),
      randomBytes(32),
    ];
    for (const key of keys) {
      for (let length = 0; length <= 300; length++) {
        const message = length % 2 ? Buffer.alloc(length, 0xff) : randomBytes(length);
        expect(poly1305(key, message), `length ${length}`).toBe(referencePoly1305(key, message));
        wasm.reset();
      }
    }
  });

  it('§2.6.2 one-time key generation is ChaCha20 block 0', () => {
    const key = hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
    const block = chacha20Block(key, 0, hex('000000000001020304050607'));
    expect(block.subarray(0, 32).toString('hex')).toBe(
      '8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646',
    );
  });
});

describe('AEAD_CHACHA20_POLY1305 (RFC 8439)', () => {
  const key = hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
  const nonce = hex('070000004041424344454647');
  const aad = hex('50515253c0c1c2c3c4c5c6c7');
  const ciphertext = hex(
    'd31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6' +
      '3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36' +
      '92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc' +
      '3ff4def08e4b7a9de576d26586cec64b6116',
  );
  const tag = hex('1ae10b594f09e26a7e902ecbd0600691');

  it('§2.8.2 seal', () => {
    const sealed = aeadSeal(key, nonce, aad, SUNSCREEN);
    expect(sealed.ciphertext).toEqual(ciphertext);
    expect(sealed.tag).toEqual(tag);
  });

  it('§2.8.2 open, and refuse every single-bit change of ciphertext, tag or AAD', () => {
    expect(aeadOpen(key, nonce, aad, ciphertext, tag)).toEqual({ ok: true, plaintext: SUNSCREEN });
    for (const [what, buffer] of [
      ['ciphertext', ciphertext],
      ['tag', tag],
      ['aad', aad],
    ] as const) {
      for (let i = 0; i < buffer.length; i += 5) {
        const changed = Buffer.from(buffer);
        changed[i]! ^= 1 << (i % 8);
        wasm.reset();
        const opened =
          what === 'ciphertext'
            ? aeadOpen(key, nonce, aad, changed, tag)
            : what === 'tag'
              ? aeadOpen(key, nonce, aad, ciphertext, changed)
              : aeadOpen(key, nonce, changed, ciphertext, tag);
        expect(opened.ok, `${what}[${i}]`).toBe(false);
      }
    }
  });

  it('A.5 decryption', () => {
    const a5Key = hex('1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0');
    const a5Ciphertext = hex(
      '64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2' +
        '4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf' +
        '332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855' +
        '9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4' +
        'b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e' +
        'af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a' +
        '0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10' +
        '49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29' +
        'a6ad5cb4022b02709b',
    );
    const opened = aeadOpen(
      a5Key,
      hex('000000000102030405060708'),
      hex('f33388860000000000004e91'),
      a5Ciphertext,
      hex('eead9d67890cbb22392336fea1851f38'),
    );
    expect(opened.ok).toBe(true);
    expect(opened.plaintext.toString('utf8')).toBe(
      'Internet-Drafts are draft documents valid for a maximum of six months and may be updated, ' +
        'replaced, or obsoleted by other documents at any time. It is inappropriate to use ' +
        'Internet-Drafts as reference material or to cite them other than as /\u201cwork in progress./\u201d',
    );
  });

  it('agrees with node:crypto for AAD and plaintext lengths 0-80, and a few long ones', () => {
    const lengths = [0, 1, 11, 15, 16, 17, 33, 63, 64, 65, 80, 1000, 4099];
    for (const aadLength of lengths) {
      for (const length of lengths) {
        const k = randomBytes(32);
        const n = randomBytes(12);
        const a = randomBytes(aadLength);
        const p = randomBytes(length);
        const cipher = createCipheriv('chacha20-poly1305', k, n, { authTagLength: 16 });
        cipher.setAAD(a, { plaintextLength: length });
        const expected = Buffer.concat([cipher.update(p), cipher.final()]);
        const sealed = aeadSeal(k, n, a, p);
        expect(sealed.ciphertext).toEqual(expected);
        expect(sealed.tag).toEqual(cipher.getAuthTag());
        wasm.reset();
      }
    }
  });
});

describe('constant-time compare', () => {
  it('equal, different, and empty', () => {
    const a = wasm.put(Buffer.from('0123456789abcdef'));
    const b = wasm.put(Buffer.from('0123456789abcdef'));
    const c = wasm.put(Buffer.from('0123456789abcdeF'));
    const eq = wasm.fn('katConstantTimeEqual');
    expect(eq(a, b, 16)).toBe(1);
    expect(eq(a, c, 16)).toBe(0);
    expect(eq(a, c, 15)).toBe(1);
    expect(eq(a, c, 0)).toBe(1);
    expect(eq(a, c, -3)).toBe(1);
  });
});
