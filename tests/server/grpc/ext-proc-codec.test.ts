// steadfast's own ext_proc codec against protobufjs (through proto-loader, from Envoy's
// protos): what it decodes equals what the generic decoder + requestAttributes() read,
// what it encodes decodes to the answers the service meant, and bytes that are not a
// message fail with MalformedMessage and nothing else.
import type * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  MalformedMessage,
  decodeProcessingRequest,
  encodeMetadataAnswer,
  encodePolicyAnswer,
  encodedContinue,
} from '../../../extproc/src/server/grpc/ext-proc-codec.js';
import type { HttpHeaders, Phase } from '../../../extproc/src/server/grpc/ext-proc-messages.js';
import { loadServiceProtos } from '../../../extproc/src/server/grpc/protos.js';
import {
  MAX_HEADERS,
  requestAttributes,
  requestListener,
} from '../../../extproc/src/server/grpc/request-attributes.js';

type Message = Record<string, unknown>;
const process = loadServiceProtos().extProc['Process'] as grpc.MethodDefinition<Message, Message>;
const encodeRequest = (m: Message): Buffer => process.requestSerialize(m);
const decodeResponse = (b: Buffer): Message => process.responseDeserialize(b);

const PHASES: Phase[] = [
  'request_headers',
  'response_headers',
  'request_body',
  'response_body',
  'request_trailers',
  'response_trailers',
];

/** A small deterministic generator, so a failure names its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function randomText(r: () => number, max: number, alphabet: string): string {
  const n = Math.floor(r() * max);
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(r() * alphabet.length)];
  return out;
}

const NAMES = [':method', ':authority', ':path', 'host', 'X-Env', 'x-env', 'cookie', 'accept', ''];
const VALUE_CHARS = 'abcXYZ019 ;=,/?&%é\u00ff\u0100日';

function randomHeaders(r: () => number): HttpHeaders {
  const headers = Array.from({ length: Math.floor(r() * 12) }, () => {
    const key = r() < 0.8 ? NAMES[Math.floor(r() * NAMES.length)] : randomText(r, 12, 'abcXYZ-_:');
    const value = randomText(r, 20, VALUE_CHARS);
    const pick = r();
    // Envoy sends raw_value; the string field and both at once are read as well.
    if (pick < 0.5) return { key, raw_value: Buffer.from(value, 'latin1') };
    if (pick < 0.8) return { key, value };
    return {
      key,
      value,
      raw_value: r() < 0.5 ? Buffer.alloc(0) : Buffer.from(value.toUpperCase(), 'latin1'),
    };
  });
  return { headers: { headers }, end_of_stream: r() < 0.5 };
}

/** Protobuf readers must skip fields they do not know: one of each wire type. */
const UNKNOWN_FIELDS = Buffer.from([
  0xf8,
  0x07,
  0x96,
  0x01, // field 127, varint 150
  0xf9,
  0x07,
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8, // field 127, fixed64
  0xfa,
  0x07,
  0x02,
  0x61,
  0x62, // field 127, 2 bytes
  0xfd,
  0x07,
  1,
  2,
  3,
  4, // field 127, fixed32
]);

describe('decodeProcessingRequest', () => {
  it('reads request headers exactly as protobufjs + requestAttributes() do (500 random messages)', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = rng(seed);
      const msg = randomHeaders(r);
      let bytes = encodeRequest({ request_headers: msg, observability_mode: r() < 0.5 });
      if (r() < 0.5) bytes = Buffer.concat([bytes, UNKNOWN_FIELDS]);
      const decoded = decodeProcessingRequest(bytes);
      expect(decoded.phase, `seed ${seed}`).toBe('request_headers');
      const oracle = requestAttributes(process.requestDeserialize(bytes)['request_headers'] as HttpHeaders);
      expect({ ...decoded.attributes, headers: { ...decoded.attributes?.headers } }, `seed ${seed}`).toEqual({
        ...oracle,
        headers: { ...oracle.headers },
      });
    }
  });

  it('reads the listener attributes exactly as protobufjs + requestListener() do (500 random messages)', () => {
    const NAMES = [
      'destination.port',
      'xds.listener_metadata.filter_metadata.steadfast.gateway_port',
      'destination.address',
      'xds.listener_direction',
    ];
    const value = (r: () => number): Message => {
      const pick = r();
      if (pick < 0.3) return { numberValue: [80, 8080, 0, 70000, 80.5, -1][Math.floor(r() * 6)] };
      if (pick < 0.8)
        return { stringValue: ['80', '9090', '', 'eighty', '080', '99999', '日本'][Math.floor(r() * 7)] };
      return { boolValue: true };
    };
    let told = 0;
    for (let seed = 1; seed <= 500; seed++) {
      const r = rng(seed);
      const attributes: Record<string, Message> = {};
      for (const filter of ['envoy.filters.http.ext_proc', 'other'].filter(() => r() < 0.7)) {
        const fields: Record<string, Message> = {};
        for (const name of NAMES) if (r() < 0.6) fields[name] = value(r);
        attributes[filter] = { fields };
      }
      const bytes = encodeRequest({ request_headers: randomHeaders(r), attributes });
      const oracle = requestListener(process.requestDeserialize(bytes)['attributes'] as never);
      const decoded = decodeProcessingRequest(bytes).attributes;
      expect(decoded?.listener, `seed ${seed}`).toEqual(oracle);
      if (oracle?.gatewayPort !== undefined || oracle?.destinationPort !== undefined) told++;
    }
    // The generator reaches every kind of case.
    expect(told).toBeGreaterThan(100);
  });

  it('reads what Envoy 1.40 sends: the port as a number, the metadata as its text', () => {
    const bytes = encodeRequest({
      request_headers: randomHeaders(rng(7)),
      attributes: {
        'envoy.filters.http.ext_proc': {
          fields: {
            'destination.port': { numberValue: 18101 },
            'destination.address': { stringValue: '127.0.0.1:18101' },
            'xds.listener_metadata.filter_metadata.steadfast.gateway_port': { stringValue: '80' },
          },
        },
      },
    });
    expect(decodeProcessingRequest(bytes).attributes?.listener).toEqual({
      gatewayPort: 80,
      destinationPort: 18101,
    });
    const bad = encodeRequest({
      request_headers: {},
      attributes: {
        f: {
          fields: {
            'xds.listener_metadata.filter_metadata.steadfast.gateway_port': { stringValue: 'x'.repeat(300) },
          },
        },
      },
    });
    expect(decodeProcessingRequest(bad).attributes?.listener).toEqual({ invalidGatewayPort: 'x'.repeat(64) });
    expect(
      decodeProcessingRequest(encodeRequest({ request_headers: {} })).attributes?.listener,
    ).toBeUndefined();
  });

  it('with a set of headers to keep, reads exactly those of them (plus pseudo-headers and host)', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const bytes = encodeRequest({ request_headers: randomHeaders(r) });
      const keep = new Set(['x-env', 'cookie', 'accept', 'abc'].filter(() => r() < 0.5));
      const oracle = requestAttributes(process.requestDeserialize(bytes)['request_headers'] as HttpHeaders);
      const wanted = Object.fromEntries(
        Object.entries(oracle.headers).filter(([k]) => k.startsWith(':') || k === 'host' || keep.has(k)),
      );
      expect({ ...decodeProcessingRequest(bytes, keep).attributes?.headers }, `seed ${seed}`).toEqual(wanted);
    }
  });

  it('names the phase of every other message and reads nothing else from it', () => {
    for (const phase of PHASES.slice(1)) {
      const body = phase.endsWith('body')
        ? { body: Buffer.from('x'), end_of_stream: true }
        : phase.endsWith('trailers')
          ? { trailers: { headers: [{ key: 'a', raw_value: Buffer.from('b') }] } }
          : { headers: { headers: [{ key: ':path', raw_value: Buffer.from('/') }] } };
      expect(decodeProcessingRequest(encodeRequest({ [phase]: body }))).toEqual({ phase });
    }
    expect(decodeProcessingRequest(Buffer.alloc(0))).toEqual({ phase: undefined });
    expect(decodeProcessingRequest(UNKNOWN_FIELDS)).toEqual({ phase: undefined });
  });

  it('keeps only the headers it is told to, besides pseudo-headers and host', () => {
    const bytes = encodeRequest({
      request_headers: {
        headers: {
          headers: [
            [':authority', 'shop.example'],
            [':path', '/cart'],
            ['host', 'h'],
            ['x-env', 'canary'],
            ['cookie', 'secret'],
            ['user-agent', 'curl'],
          ].map(([key, v]) => ({ key, raw_value: Buffer.from(v as string) })),
        },
      },
    });
    const keep = new Set(['x-env']);
    const d = decodeProcessingRequest(bytes, keep);
    expect({ ...d.attributes?.headers }).toEqual({
      ':authority': 'shop.example',
      ':path': '/cart',
      host: 'h',
      'x-env': 'canary',
    });
    expect(d.keep).toBe(keep);
    expect({ ...decodeProcessingRequest(bytes, new Set()).attributes?.headers }).not.toHaveProperty('x-env');
  });

  it('reads at most MAX_HEADERS headers', () => {
    const headers = Array.from({ length: MAX_HEADERS + 50 }, (_, i) => ({
      key: `x-h${i}`,
      raw_value: Buffer.from('v'),
    }));
    const d = decodeProcessingRequest(encodeRequest({ request_headers: { headers: { headers } } }));
    expect(Object.keys(d.attributes?.headers ?? {})).toHaveLength(MAX_HEADERS);
  });

  it('throws MalformedMessage, and only that, on bytes that are not a message', () => {
    const valid = encodeRequest({
      request_headers: { headers: { headers: [{ key: ':path', raw_value: Buffer.from('/a/b/c') }] } },
    });
    // Every truncation of a valid message either still parses or is malformed.
    for (let n = 0; n < valid.length; n++) {
      try {
        decodeProcessingRequest(valid.subarray(0, n));
      } catch (e) {
        expect(e).toBeInstanceOf(MalformedMessage);
      }
    }
    expect(() => decodeProcessingRequest(valid.subarray(0, valid.length - 1))).toThrow(MalformedMessage);
    expect(() => decodeProcessingRequest(Buffer.from([0x0b]))).toThrow(MalformedMessage); // wire type 3
    expect(() => decodeProcessingRequest(Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow(
      MalformedMessage,
    );
    const r = rng(7);
    for (let i = 0; i < 2000; i++) {
      const garbage = Buffer.from(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256)));
      try {
        decodeProcessingRequest(garbage);
      } catch (e) {
        expect(e).toBeInstanceOf(MalformedMessage);
      }
    }
  });
});

describe('encoded answers', () => {
  it('a policy answer is request_headers CONTINUE with the token in the steadfast namespace', () => {
    const token = 'sf1;id=httproute/default/shop/rule/0;r=3;é';
    expect(decodeResponse(encodePolicyAnswer('steadfast', 'policy', token))).toEqual({
      response: 'request_headers',
      request_headers: { response: {} },
      dynamic_metadata: {
        fields: {
          steadfast: {
            structValue: { fields: { policy: { stringValue: token, kind: 'stringValue' } } },
            kind: 'structValue',
          },
        },
      },
    });
  });

  it('a long token gets a multi-byte length', () => {
    const token = 'x'.repeat(70_000);
    const answer = decodeResponse(encodePolicyAnswer('steadfast', 'policy', token)) as {
      dynamic_metadata: {
        fields: { steadfast: { structValue: { fields: { policy: { stringValue: string } } } } };
      };
    };
    expect(answer.dynamic_metadata.fields.steadfast.structValue.fields.policy.stringValue).toBe(token);
  });

  it('"continue" for each phase', () => {
    for (const phase of PHASES) {
      const trailers = phase.endsWith('trailers');
      expect(decodeResponse(encodedContinue(phase))).toEqual({
        response: phase,
        [phase]: trailers ? {} : { response: {} },
      });
    }
  });
});

describe('encodeMetadataAnswer', () => {
  it('carries several fields in the namespace, each a string value', () => {
    const answer = decodeResponse(
      encodeMetadataAnswer('steadfast', [
        ['policy', 'sf1;id=x'],
        ['scope', 'sc1;g=0123456789abcdef;q=1'],
      ]),
    ) as {
      dynamic_metadata: { fields: Record<string, { structValue: { fields: Record<string, unknown> } }> };
    };
    expect(answer.dynamic_metadata.fields['steadfast']?.structValue.fields).toEqual({
      policy: { stringValue: 'sf1;id=x', kind: 'stringValue' },
      scope: { stringValue: 'sc1;g=0123456789abcdef;q=1', kind: 'stringValue' },
    });
  });
});
