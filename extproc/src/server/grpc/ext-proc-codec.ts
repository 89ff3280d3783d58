// Envoy's ext_proc messages on the wire, for just what the service reads and writes —
// instead of a generic protobuf codec that builds an object for every field of every
// header. Field numbers are those of envoy/service/ext_proc/v3/external_processor.proto
// and envoy/config/core/v3/base.proto (read from the protos @grpc/grpc-js-xds ships);
// tests/server/grpc/ext-proc-codec.test.ts checks both directions against protobufjs.
import type { Phase } from './ext-proc-messages.js';
import {
  MAX_HEADER_VALUE_BYTES,
  MAX_HEADERS,
  type RequestAttributes,
  listenerFrom,
} from './request-attributes.js';
import { ATTRIBUTE_DESTINATION_PORT, ATTRIBUTE_GATEWAY_PORT } from '../../ir/listener-ports.js';

/** What the service takes from one ProcessingRequest. */
export interface ExtProcRequest {
  /** Which oneof field the message carries; undefined when it carries none. */
  readonly phase: Phase | undefined;
  /** For `request_headers`: the request as the resolver sees it. */
  readonly attributes?: RequestAttributes;
  /** The headers `attributes` was read for, and the message, to read again under another filter. */
  readonly keep?: HeaderFilter;
  readonly bytes?: Buffer;
}

/** Which headers to keep (lower-case names); pseudo-headers and `host` are always kept. */
export type HeaderFilter = ReadonlySet<string> | undefined;

// ProcessingRequest: oneof request { request_headers = 2 … response_trailers = 7 }.
const REQUEST_PHASES: ReadonlyArray<Phase | undefined> = [
  undefined,
  undefined,
  'request_headers',
  'response_headers',
  'request_body',
  'response_body',
  'request_trailers',
  'response_trailers',
];

/** A protobuf message the service cannot read: grpc-js answers the stream with INTERNAL. */
export class MalformedMessage extends Error {}

const malformed = (what: string): never => {
  throw new MalformedMessage(`malformed ext_proc message: ${what}`);
};

/** A cursor over one message's bytes; every read is bounds-checked. */
class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint that fits 32 bits (tags and lengths); longer ones are malformed here. */
  varint32(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) return malformed('truncated varint');
      const b = this.buf[this.pos++] as number;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (value > 0x7fffffff) return malformed('length out of range');
        return value;
      }
    }
    return malformed('varint too long');
  }

  /** Skips a field's value of the given wire type. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0: {
        // Any varint, up to 10 bytes.
        for (let i = 0; i < 10; i++) {
          if (this.pos >= this.end) return malformed('truncated varint');
          if ((this.buf[this.pos++] as number) < 0x80) return;
        }
        return malformed('varint too long');
      }
      case 1:
        return this.advance(8);
      case 2:
        return this.advance(this.varint32());
      case 5:
        return this.advance(4);
      default:
        return malformed(`wire type ${wireType}`);
    }
  }

  /** The end of a length-delimited value that starts here. */
  delimitedEnd(): number {
    const len = this.varint32();
    const end = this.pos + len;
    if (end > this.end) return malformed('length past the end');
    return end;
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) malformed('field past the end');
    this.pos += n;
  }
}

/** Header names no longer than this are compared in place before any string is made. */
const MAX_COMPARED_NAMES = 16;

/**
 * Whether the name in buf[start, end) may be kept: a pseudo-header, `host`, or the length
 * of a kept name (for a short list, the name itself compared case-insensitively; names
 * are RFC 7230 tokens, ASCII). Most headers of a request are dropped here without a
 * string being made for their name.
 */
function maybeKept(buf: Buffer, start: number, end: number, keep: ReadonlySet<string>): boolean {
  const len = end - start;
  if (buf[start] === 58 /* : */ || len === 4) return true; // pseudo-headers, host
  if (keep.size > MAX_COMPARED_NAMES) return true; // the string check decides
  for (const name of keep) {
    if (name.length !== len) continue;
    let i = 0;
    while (i < len && ((buf[start + i] as number) | 0x20) === (name.charCodeAt(i) | 0x20)) i++;
    if (i === len) return true;
  }
  return false;
}

/** Reads a HeaderValue {key = 1, value = 2, raw_value = 3} into `headers`, if kept. */
function readHeaderValue(r: Reader, end: number, headers: Record<string, string>, keep: HeaderFilter): void {
  let keyStart = 0;
  let keyEnd = 0;
  let valueStart = 0;
  let valueEnd = 0;
  let rawStart = 0;
  let rawEnd = 0;
  while (r.pos < end) {
    const tag = r.varint32();
    const field = tag >>> 3;
    if ((tag & 7) !== 2 || field < 1 || field > 3) {
      r.skip(tag & 7);
      continue;
    }
    const e = r.delimitedEnd();
    if (field === 1) {
      keyStart = r.pos;
      keyEnd = e;
    } else if (field === 2) {
      valueStart = r.pos;
      valueEnd = e;
    } else {
      rawStart = r.pos;
      rawEnd = e;
    }
    r.pos = e;
  }
  if (keyEnd === keyStart) return;
  if (keep !== undefined && !maybeKept(r.buf, keyStart, keyEnd, keep)) return;
  // A protobuf string is UTF-8 (header names are ASCII tokens in practice).
  const key = r.buf.toString('utf8', keyStart, keyEnd).toLowerCase();
  if (keep !== undefined && key.charCodeAt(0) !== 58 /* : */ && key !== 'host' && !keep.has(key)) return;
  let value: string;
  // As requestAttributes(): a non-empty raw_value wins, read as latin1; values are capped.
  if (rawEnd > rawStart) {
    value = r.buf.toString('latin1', rawStart, Math.min(rawEnd, rawStart + MAX_HEADER_VALUE_BYTES));
  } else {
    value = r.buf.toString('utf8', valueStart, valueEnd);
    if (value.length > MAX_HEADER_VALUE_BYTES) value = value.slice(0, MAX_HEADER_VALUE_BYTES);
  }
  const seen = headers[key];
  headers[key] = seen === undefined ? value : `${seen},${value}`;
}

/** HttpHeaders {headers = 1: HeaderMap {repeated HeaderValue headers = 1}} → headers by name. */
function readHttpHeaders(r: Reader, end: number, keep: HeaderFilter): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  let count = 0;
  while (r.pos < end) {
    const tag = r.varint32();
    if (tag !== ((1 << 3) | 2)) {
      r.skip(tag & 7);
      continue;
    }
    const mapEnd = r.delimitedEnd();
    while (r.pos < mapEnd) {
      const t = r.varint32();
      if (t !== ((1 << 3) | 2)) {
        r.skip(t & 7);
        continue;
      }
      const valueEnd = r.delimitedEnd();
      // Bounded like requestAttributes(): headers past the first MAX_HEADERS are not read.
      if (count++ < MAX_HEADERS) readHeaderValue(r, valueEnd, headers, keep);
      r.pos = valueEnd;
    }
  }
  return headers;
}

/** The attribute values the service reads (request-attributes.ts), as Envoy sent them. */
interface ListenerValues {
  gatewayPort: number | string | undefined;
  destinationPort: number | string | undefined;
}

/** Whether buf[start, end) holds exactly the ASCII text `name`. */
function sameText(buf: Buffer, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (buf[start + i] !== name.charCodeAt(i)) return false;
  return true;
}

/** google.protobuf.Value: number_value = 2 (double), string_value = 3; other kinds are undefined. */
function readValue(r: Reader, end: number): number | string | undefined {
  let value: number | string | undefined;
  while (r.pos < end) {
    const tag = r.varint32();
    if (tag === ((2 << 3) | 1)) {
      if (r.pos + 8 > end) return malformed('field past the end');
      value = r.buf.readDoubleLE(r.pos);
      r.pos += 8;
    } else if (tag === ((3 << 3) | 2)) {
      const e = r.delimitedEnd();
      // Only short texts can be a port; a longer one is kept cut, for the report.
      value = r.buf.toString('utf8', r.pos, Math.min(e, r.pos + 256));
      r.pos = e;
    } else {
      // Another kind of the oneof replaces what came before, as in any protobuf decoder.
      if (tag >>> 3 >= 1 && tag >>> 3 <= 6) value = undefined;
      r.skip(tag & 7);
    }
  }
  return value;
}

/**
 * ProcessingRequest.attributes = 9: map<string, Struct> entries {key = 1, value = 2}, each
 * Struct {fields = 1: map<string, Value>}; the values of the two listener attributes, from
 * any ext_proc filter name, the last one on the wire winning.
 */
function readAttributes(r: Reader, end: number, out: ListenerValues): void {
  while (r.pos < end) {
    const tag = r.varint32();
    if (tag !== ((2 << 3) | 2)) {
      r.skip(tag & 7);
      continue;
    }
    const structEnd = r.delimitedEnd();
    while (r.pos < structEnd) {
      const t = r.varint32();
      if (t !== ((1 << 3) | 2)) {
        r.skip(t & 7);
        continue;
      }
      const entryEnd = r.delimitedEnd();
      let which: keyof ListenerValues | undefined;
      let value: number | string | undefined;
      let hasValue = false;
      while (r.pos < entryEnd) {
        const et = r.varint32();
        if (et === ((1 << 3) | 2)) {
          const e = r.delimitedEnd();
          which = sameText(r.buf, r.pos, e, ATTRIBUTE_GATEWAY_PORT)
            ? 'gatewayPort'
            : sameText(r.buf, r.pos, e, ATTRIBUTE_DESTINATION_PORT)
              ? 'destinationPort'
              : undefined;
          r.pos = e;
        } else if (et === ((2 << 3) | 2)) {
          const e = r.delimitedEnd();
          value = readValue(r, e);
          hasValue = true;
          r.pos = e;
        } else {
          r.skip(et & 7);
        }
      }
      if (which !== undefined) out[which] = hasValue ? (value ?? out[which]) : out[which];
    }
    r.pos = structEnd;
  }
}

/**
 * Decodes a ProcessingRequest: its phase, and for request headers the attributes the
 * resolver reads (only the headers in `keep`, when given) with the listener Envoy's
 * `request_attributes` describe. Throws MalformedMessage on bytes that are not a protobuf message.
 */
export function decodeProcessingRequest(buf: Buffer, keep?: HeaderFilter): ExtProcRequest {
  const r = new Reader(buf, 0, buf.length);
  let phase: Phase | undefined;
  let headers: Record<string, string> | undefined;
  const values: ListenerValues = { gatewayPort: undefined, destinationPort: undefined };
  while (r.pos < r.end) {
    const tag = r.varint32();
    const field = tag >>> 3;
    if (tag === ((9 << 3) | 2)) {
      const end = r.delimitedEnd();
      readAttributes(r, end, values);
      r.pos = end;
      continue;
    }
    const p = field < REQUEST_PHASES.length ? REQUEST_PHASES[field] : undefined;
    if (p === undefined || (tag & 7) !== 2) {
      r.skip(tag & 7);
      continue;
    }
    const end = r.delimitedEnd();
    // A oneof: the last one on the wire wins, as in any protobuf decoder.
    phase = p;
    headers = p === 'request_headers' ? readHttpHeaders(r, end, keep) : undefined;
    r.pos = end;
  }
  if (headers === undefined) return { phase };
  const listener = listenerFrom(values.gatewayPort, values.destinationPort);
  const attributes: RequestAttributes = {
    method: headers[':method'] ?? '',
    authority: headers[':authority'] ?? headers['host'] ?? '',
    path: headers[':path'] ?? '',
    headers,
    ...(listener ? { listener } : {}),
  };
  return { phase, attributes, keep, bytes: buf };
}

// --- ProcessingResponse ---

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** A length-delimited field: tag, length, bytes. */
function delimited(field: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varintBytes(body.length)]), body]);
}

// ProcessingResponse: oneof response { request_headers = 1 … response_trailers = 6 };
// HeadersResponse and BodyResponse {response = 1: CommonResponse}; TrailersResponse {}.
const RESPONSE_FIELD: Readonly<Record<Phase, number>> = {
  request_headers: 1,
  response_headers: 2,
  request_body: 3,
  response_body: 4,
  request_trailers: 5,
  response_trailers: 6,
};

const EMPTY = Buffer.alloc(0);

function continueBytes(phase: Phase): Buffer {
  const trailers = phase === 'request_trailers' || phase === 'response_trailers';
  // An empty CommonResponse is CONTINUE: "carry on, change nothing".
  return delimited(RESPONSE_FIELD[phase], trailers ? EMPTY : delimited(1, EMPTY));
}

const CONTINUE = Object.fromEntries(
  (Object.keys(RESPONSE_FIELD) as Phase[]).map((p) => [p, continueBytes(p)]),
) as Readonly<Record<Phase, Buffer>>;

/** The encoded "continue" answer to a phase (the same Buffer every time: never modify it). */
export function encodedContinue(phase: Phase): Buffer {
  return CONTINUE[phase];
}

/** google.protobuf.Struct {fields = 1: map<string, Value>}: one map entry per field. */
function structOf(fields: ReadonlyArray<readonly [string, Buffer]>): Buffer {
  return Buffer.concat(
    fields.map(([key, value]) =>
      delimited(1, Buffer.concat([delimited(1, Buffer.from(key, 'utf8')), delimited(2, value)])),
    ),
  );
}

/**
 * The answer to request headers with `dynamic_metadata = 8` holding
 * `{<namespace>: {<key>: "<value>", ...}}`: Value.struct_value = 5, Value.string_value = 3.
 */
export function encodeMetadataAnswer(
  namespace: string,
  fields: ReadonlyArray<readonly [string, string]>,
): Buffer {
  const inner = structOf(fields.map(([k, v]) => [k, delimited(3, Buffer.from(v, 'utf8'))] as const));
  const metadata = structOf([[namespace, delimited(5, inner)]]);
  return Buffer.concat([CONTINUE.request_headers, delimited(8, metadata)]);
}

/** The answer with just the policy token: `{<namespace>: {<key>: "<token>"}}`. */
export function encodePolicyAnswer(namespace: string, key: string, token: string): Buffer {
  return encodeMetadataAnswer(namespace, [[key, token]]);
}
