// Envoy's resources as protobuf, for the ADS server: the generator writes them as Envoy's
// JSON (snake_case field names, `@type` on each Any, durations as "1.5s", Struct metadata as
// plain objects); xDS sends each as a google.protobuf.Any holding the encoded message. The
// message definitions are Envoy's own protos, as @grpc/grpc-js-xds ships them (deps/), read
// with protobufjs. A field the protos do not know, a value of the wrong type or an enum name
// they do not have is an error, never dropped or coerced: a resource Envoy would read
// differently than written must not be sent.
import { createRequire } from 'node:module';
import { accessSync, constants } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';
import { ownProtoDir } from '../proto-dir.js';

const require = createRequire(import.meta.url);

/** The protos that define every type the gateway generator names in an `@type`, and xDS's own. */
const RESOURCE_PROTOS = [
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/extensions/transport_sockets/tls/v3/secret.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/wasm/v3/wasm.proto',
  // Not among @grpc/grpc-js-xds's protos: steadfast declares the native filter's messages itself.
  'steadfast/dynamic-modules-filter.proto',
  'envoy/extensions/filters/http/stateful_session/v3/stateful_session.proto',
  'envoy/extensions/http/stateful_session/header/v3/header.proto',
  'envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto',
  'envoy/extensions/filters/http/upstream_codec/v3/upstream_codec.proto',
  'envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/common/matcher/action/v3/skip_action.proto',
  'envoy/extensions/common/matching/v3/extension_matcher.proto',
  'envoy/extensions/matching/common_inputs/network/v3/network_inputs.proto',
  'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/type/matcher/v3/http_inputs.proto',
  // The discovery messages themselves.
  'envoy/service/discovery/v3/ads.proto',
];

const TYPE_PREFIX = 'type.googleapis.com/';

let cachedRoot: protobuf.Root | undefined;

function includeDirs(): string[] {
  const deps = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  return [
    ...['envoy-api', 'xds', 'protoc-gen-validate', 'googleapis'].map((d) => join(deps, d)),
    ownProtoDir(),
  ];
}

/** Envoy's message types, loaded once (about a second). */
export function envoyProtoRoot(): protobuf.Root {
  if (cachedRoot) return cachedRoot;
  // descriptor.proto (the annotations extend it) is not among protobufjs's built-in files.
  const descriptor = require('protobufjs/google/protobuf/descriptor.json') as {
    nested: { google: { nested: { protobuf: { nested: protobuf.INamespace['nested'] } } } };
  };
  protobuf.common('descriptor', descriptor.nested.google.nested.protobuf.nested as never);
  const dirs = includeDirs();
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target;
    for (const dir of dirs) {
      const full = join(dir, target);
      try {
        accessSync(full, constants.R_OK);
        return full;
      } catch {
        // the next include directory
      }
    }
    return protobuf.util.path.resolve(origin, target);
  };
  root.loadSync(RESOURCE_PROTOS, { keepCase: true });
  root.resolveAll();
  cachedRoot = root;
  return root;
}

export class ProtoConversionError extends Error {}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** "1.5s", "0s", "0.001s" → seconds and nanos. */
function duration(v: unknown, at: string): JsonObject {
  const m = typeof v === 'string' ? /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(v) : null;
  if (!m) throw new ProtoConversionError(`${at}: ${JSON.stringify(v)} is not a duration like "1.5s"`);
  const sign = m[1] === '-' ? -1 : 1;
  const nanos = Number((m[3] ?? '').padEnd(9, '0'));
  return { seconds: sign * Number(m[2]), nanos: sign * nanos };
}

/** google.protobuf.Value (protobufjs defines its fields in camelCase, whatever keepCase says). */
function structValue(v: unknown): JsonObject {
  if (v === null) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(structValue) } };
  return { structValue: struct(v as JsonObject) };
}

function struct(v: JsonObject): JsonObject {
  return { fields: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, structValue(x)])) };
}

const WRAPPERS = new Set(
  ['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map(
    (w) => `google.protobuf.${w}Value`,
  ),
);

const INTEGER_32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const INTEGER_64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/**
 * A scalar or enum value, checked against its field's type: protobufjs would coerce a wrong
 * one (the string "false" to true) or drop an enum name it does not know.
 */
function scalar(field: protobuf.Field, v: unknown, at: string): unknown {
  const wrong = (what: string) => new ProtoConversionError(`${at}: ${JSON.stringify(v)} is not ${what}`);
  if (field.resolvedType instanceof protobuf.Enum) {
    const values = field.resolvedType.values;
    if (
      typeof v === 'string' ? !(v in values) : !(typeof v === 'number' && Object.values(values).includes(v))
    )
      throw wrong(`a value of ${field.resolvedType.name}`);
    return v;
  }
  const t = field.type;
  if (t === 'bool' && typeof v !== 'boolean') throw wrong('a boolean');
  if ((t === 'string' || t === 'bytes') && typeof v !== 'string') throw wrong('a string');
  if (INTEGER_32.has(t) && !(typeof v === 'number' && Number.isInteger(v))) throw wrong('an integer');
  if (INTEGER_64.has(t) && !(Number.isInteger(v) || (typeof v === 'string' && /^-?\d+$/.test(v))))
    throw wrong('an integer');
  if ((t === 'double' || t === 'float') && typeof v !== 'number') throw wrong('a number');
  return v;
}

/** One value of a field: a message's object, or a checked scalar. */
function fieldValue(field: protobuf.Field, x: unknown, at: string): unknown {
  return field.resolvedType instanceof protobuf.Type
    ? messageObject(field.resolvedType, x, at)
    : scalar(field, x, at);
}

/** Each type's full name without its leading dot, made once: protobufjs joins it anew on every read. */
const typeNames = new WeakMap<protobuf.Type, string>();

function typeName(type: protobuf.Type): string {
  let name = typeNames.get(type);
  if (name === undefined) typeNames.set(type, (name = type.fullName.replace(/^\./, '')));
  return name;
}

/** A message's JSON as the object protobufjs's fromObject takes (well-known types unfolded). */
function messageObject(type: protobuf.Type, v: unknown, at: string): unknown {
  const name = typeName(type);
  if (name === 'google.protobuf.Duration') return duration(v, at);
  if (WRAPPERS.has(name)) {
    // A wrapper's JSON is its value alone, checked as the wrapped scalar.
    const valueField = type.fields['value'] as protobuf.Field;
    return { value: scalar(valueField, v, at) };
  }
  if (name === 'google.protobuf.Struct') {
    if (!isObject(v)) throw new ProtoConversionError(`${at}: a Struct must be an object`);
    return struct(v);
  }
  if (name === 'google.protobuf.Value') return structValue(v);
  if (name === 'google.protobuf.ListValue') {
    if (!Array.isArray(v)) throw new ProtoConversionError(`${at}: a ListValue must be a list`);
    return { values: v.map(structValue) };
  }
  if (name === 'google.protobuf.Any') {
    if (!isObject(v)) throw new ProtoConversionError(`${at}: an Any must be an object`);
    // `{}` is the empty Any (no type, no value): a route's FilterConfig switches a filter on
    // with it.
    if (Object.keys(v).length === 0) return {};
    return encodeAny(v, at);
  }
  if (!isObject(v))
    throw new ProtoConversionError(`${at}: ${name} must be an object, got ${JSON.stringify(v)}`);
  const out: JsonObject = {};
  // Keys, not entries: this runs for every message of every virtual host encoded.
  for (const key of Object.keys(v)) {
    const value = v[key];
    const field = type.fields[key];
    if (!field) throw new ProtoConversionError(`${at}: ${name} has no field ${key}`);
    const fieldAt = `${at}.${key}`;
    if (field.map) {
      if (!isObject(value)) throw new ProtoConversionError(`${fieldAt}: a map must be an object`);
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, x]) => [k, fieldValue(field, x, `${fieldAt}.${k}`)]),
      );
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new ProtoConversionError(`${fieldAt}: must be a list`);
      out[key] = value.map((x, i) => fieldValue(field, x, `${fieldAt}[${i}]`));
    } else {
      out[key] = fieldValue(field, value, fieldAt);
    }
  }
  return out;
}

/**
 * An encoding as a Buffer over the same memory (protobufjs hands Node a Buffer already).
 * Buffer.from would copy it: what the ADS server keeps (every virtual host's encoding) would sit
 * in Node's 8 KB pools between the dead originals, and keep those pools alive.
 */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The Any of one `@type`d JSON object: its type URL and the encoded message. */
export function encodeAny(v: JsonObject, at = 'resource'): { type_url: string; value: Buffer } {
  const url = v['@type'];
  if (typeof url !== 'string' || !url.startsWith(TYPE_PREFIX))
    throw new ProtoConversionError(`${at}: an Any needs an @type of ${TYPE_PREFIX}…`);
  const typeName = url.slice(TYPE_PREFIX.length);
  let type: protobuf.Type;
  try {
    type = envoyProtoRoot().lookupType(typeName);
  } catch {
    throw new ProtoConversionError(`${at}: unknown message type ${typeName}`);
  }
  const rest: JsonObject = { ...v };
  delete rest['@type'];
  // A well-known type with its own JSON form carries it under "value".
  const special = /^google\.protobuf\./.test(typeName) && 'value' in rest && Object.keys(rest).length === 1;
  const object = messageObject(type, special ? rest['value'] : rest, `${at}<${typeName}>`);
  const message = type.fromObject(object as JsonObject);
  return { type_url: url, value: asBuffer(type.encode(message).finish()) };
}

/** Decodes an Any back to Envoy's JSON field names (for tests and the admin's view). */
export function decodeAny(any: { type_url: string; value: Uint8Array }): JsonObject {
  const type = envoyProtoRoot().lookupType(any.type_url.slice(TYPE_PREFIX.length));
  return type.toObject(type.decode(any.value), { longs: Number, enums: String, defaults: false });
}
