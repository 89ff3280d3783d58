// The route file of a file-fed Envoy, written as protobuf (a DiscoveryResponse, `.pb`) rather
// than JSON. At 10,000 routes Envoy read a listener's route configuration as 17 MB of JSON in
// 1.1 s and as 10.7 MB of protobuf in 0.3 s. A one-route change makes Envoy read the whole
// file again, which as JSON was the largest part of a gateway-mode change.
//
// Encoding is checked field by field (envoy-protos.ts), which costs about as much as Envoy's
// JSON parse, so it is done per virtual host and kept: a virtual host whose JSON did not change
// since the last generation is not encoded again. A RouteConfiguration's virtual hosts are a
// repeated message field, and protobuf reads a repeated field's elements in the order they
// come wherever they stand in the message, so the file is the configuration without its
// virtual hosts followed by each host's encoded bytes under that field's number. The admin's
// /config_dump and `steadfast envoy-config` stay the readable views.
import { createHash } from 'node:crypto';
import protobuf from 'protobufjs';
import { TYPE_ROUTE_CONFIGURATION } from '../envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../envoy/xds-resources.js';
import { type Json, sameEnds } from '../json.js';
import { encodeAny, envoyProtoRoot } from './envoy-protos.js';

/** The field number of RouteConfiguration.virtual_hosts, from Envoy's own proto. */
function virtualHostsField(): number {
  const field = envoyProtoRoot().lookupType('envoy.config.route.v3.RouteConfiguration').fields[
    'virtual_hosts'
  ];
  if (!field) throw new Error('RouteConfiguration has no virtual_hosts field');
  return field.id;
}

/** Length-delimited wire type. */
const LEN = 2;
// DiscoveryResponse.version_info = 1, .resources = 2; Any.type_url = 1, .value = 2.
const DISCOVERY_VERSION = 1;
const DISCOVERY_RESOURCES = 2;
const ANY_TYPE_URL = 1;
const ANY_VALUE = 2;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Writes n (non-negative) as a protobuf varint at `at`; returns where it ends. */
function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at++] = n;
  return at;
}

/**
 * One virtual host of a configuration: its name and encoding. With VHDS names (the ADS server's
 * encoder), `value` is `bytes` followed by VirtualHost.name set to `id` (protobuf takes a
 * singular field's last value), and `bytes` the start of that one buffer: the host is held once
 * for its VHDS resource and its route configuration (ads-routes.ts).
 */
export type RoutePart = {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly id: string | undefined;
  readonly value: Buffer | undefined;
};

/** A RouteConfiguration's encoding without its virtual hosts, and each host's. */
export interface RouteParts {
  readonly head: Uint8Array;
  readonly hosts: readonly RoutePart[];
}

/** What marks a kept encoding standing where a host's JSON would (keepHost): JSON.stringify never sees it. */
const KEPT = Symbol('kept encoding');

/**
 * One virtual host's encoding, under the digest of its JSON, and how many places in the kept
 * lists hold it. It is itself the part of each configuration that lists it, and what the
 * generation memo keeps in place of the host's JSON (keepHost): one record per host.
 */
type KeptEncoding = RoutePart & {
  readonly [KEPT]: true;
  readonly key: string;
  holders: number;
};

const isKept = (host: Json): host is KeptEncoding => KEPT in host;

// VirtualHost.name is field 1, length-delimited.
const VIRTUAL_HOST_NAME_TAG = (1 << 3) | LEN;

/**
 * A virtual host's encoding under another name: one buffer, the bytes then the name, in memory
 * of its own: a slice of Node's shared pool kept for long would keep its whole slab, whatever
 * else was cut from it, and encoding leaves mostly garbage there.
 */
export function renamed(bytes: Uint8Array, name: string): Buffer {
  const tail = protobuf.Writer.create().uint32(VIRTUAL_HOST_NAME_TAG).string(name).finish();
  const out = Buffer.allocUnsafeSlow(bytes.length + tail.length);
  out.set(bytes, 0);
  out.set(tail, bytes.length);
  return out;
}

/** A route configuration's hosts as last encoded: their JSON, and the encoding of each (its parts). */
interface KeptConfiguration {
  /** The configuration without its hosts, written out, and its encoding. */
  readonly headJson: string;
  readonly head: Uint8Array;
  readonly json: readonly Json[];
  readonly kept: readonly KeptEncoding[];
  generation: number;
}

export class RouteFileEncoder {
  /** Virtual hosts encoded anew in the current (or last) generation; the rest were kept. */
  encodedHosts = 0;
  /** Virtual hosts written out as JSON and hashed in the current (or last) generation: the rest were known objects. */
  hashedHosts = 0;
  /**
   * Each virtual host's encoding by a digest of its JSON (the JSON itself as the key held 17 MB
   * at 10,000 hosts and raised the service's peak), while a route configuration as last encoded
   * holds it: one no longer held is let go.
   */
  private readonly byKey = new Map<string, KeptEncoding>();
  /**
   * The same host object as an earlier generation's (the generator keeps unchanged hosts:
   * envoy/generation-memo.ts) is neither written out nor hashed again.
   */
  private readonly byObject = new WeakMap<Json, KeptEncoding>();
  /**
   * By route configuration name, its hosts as last encoded: a list whose start and end are the
   * same host objects takes their parts over and looks at the hosts between alone.
   */
  private readonly configurations = new Map<string, KeptConfiguration>();
  private generation = 0;
  private field: number | undefined;
  /** A generation begun (or a host kept for it) and not ended: the counts run on. */
  private open = false;
  /** Encoded in this generation and perhaps not held yet: a second host of the same content takes it. */
  private readonly fresh = new Map<string, KeptEncoding>();

  /**
   * `named`: each host is encoded with the name of its VHDS resource after it (the ADS server's
   * encoder, ads-routes.ts), which is then the same buffer as the host's bytes; a file-fed
   * Envoy's encoder writes no names.
   */
  constructor(private readonly named = false) {}

  /** Encodings kept by their digest: after a generation's end, those of the hosts it used. */
  get keptHosts(): number {
    return this.byKey.size;
  }

  /** Starts a generation: the route configurations it does not encode are let go at its end. */
  begin(): void {
    this.opened();
    this.generation++;
  }

  /** The counts start with a generation's first host kept or its begin(), whichever comes first. */
  private opened(): void {
    if (this.open) return;
    this.open = true;
    this.encodedHosts = 0;
    this.hashedHosts = 0;
  }

  /** Ends a generation: only what it used is kept for the next. */
  end(): void {
    for (const [name, c] of this.configurations) {
      if (c.generation === this.generation) continue;
      for (const k of c.kept) this.release(k);
      this.configurations.delete(name);
    }
    this.fresh.clear();
    this.open = false;
  }

  /**
   * A virtual host the generator made for route configuration `configuration`, as its memo keeps
   * it (envoy/generation-memo.ts): encoded now, its JSON let go; the configuration lists what
   * this returns where the host's JSON would stand, and parts() takes the encoding as it is.
   * Such a configuration is for this encoder only: written out as JSON, each host would show as
   * its record (its bytes as numbers), not as the host.
   */
  keepHost(host: Json, configuration: string): Json {
    this.opened();
    const name = String(host['name']);
    const at = `route configuration ${configuration}, virtual host ${name}`;
    return this.byDigest(host, at, configuration);
  }

  /** The file of one RouteConfiguration (its JSON, as the generator wrote it). */
  encode(routeConfiguration: Json, version: string): Uint8Array {
    const any = protobuf.Writer.create()
      .uint32((ANY_TYPE_URL << 3) | LEN)
      .string(TYPE_ROUTE_CONFIGURATION)
      .uint32((ANY_VALUE << 3) | LEN)
      .bytes(this.configuration(routeConfiguration))
      .finish();
    return protobuf.Writer.create()
      .uint32((DISCOVERY_VERSION << 3) | LEN)
      .string(version)
      .uint32((DISCOVERY_RESOURCES << 3) | LEN)
      .bytes(any)
      .finish();
  }

  /** One RouteConfiguration message, as the ADS server sends it in an Any (ads-server.ts). */
  configuration(routeConfiguration: Json): Buffer {
    return this.joined(this.parts(routeConfiguration));
  }

  /** The RouteConfiguration message of its parts. */
  joined({ head, hosts }: RouteParts): Buffer {
    return withHosts(
      head,
      hosts.map((h) => h.bytes),
      (this.field ??= virtualHostsField()),
    );
  }

  /**
   * A RouteConfiguration apart: the message without its virtual hosts (`head`), and each
   * host's encoding with its name (a delta stream sends them as VHDS resources, ads-routes.ts).
   * The hosts at the same place from the start or the end of the configuration's last list
   * (the same objects) keep their parts, the same objects too; the others are looked up or
   * encoded.
   */
  parts(routeConfiguration: Json): RouteParts {
    const { virtual_hosts: hosts, ...rest } = routeConfiguration;
    const list = Array.isArray(hosts) ? (hosts as Json[]) : [];
    const name = String(routeConfiguration['name']);
    const last = this.configurations.get(name);
    // The rest of a configuration seldom changes: written out, it is compared with the last.
    const headJson = JSON.stringify(rest);
    const head =
      last?.headJson === headJson
        ? last.head
        : encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...rest }, 'route configuration').value;
    const { start, end } = last ? sameEnds(last.json, list) : { start: 0, end: 0 };
    const madeKept: KeptEncoding[] = [];
    for (let i = start; i < list.length - end; i++) madeKept.push(this.host(list[i] as Json, i, name));
    // Held by the new list before the last one's are let go: a host in both stays.
    for (const k of madeKept) this.hold(k);
    if (last) for (let i = start; i < last.kept.length - end; i++) this.release(last.kept[i] as KeptEncoding);
    const ends = <T>(kept: readonly T[] | undefined, middle: T[]): T[] =>
      kept ? kept.slice(0, start).concat(middle, kept.slice(kept.length - end)) : middle;
    const kept = ends(last?.kept, madeKept);
    this.configurations.set(name, { headJson, head, json: list, kept, generation: this.generation });
    return { head, hosts: kept };
  }

  private hold(k: KeptEncoding): void {
    if (k.holders++ === 0) this.byKey.set(k.key, k);
  }

  private release(k: KeptEncoding): void {
    if (--k.holders === 0 && this.byKey.get(k.key) === k) this.byKey.delete(k.key);
  }

  /** One virtual host's encoding: kept from an earlier generation when its JSON is the same. */
  private host(host: Json, i: number, configuration: string): KeptEncoding {
    let kept = isKept(host) ? host : this.byObject.get(host);
    // Let go since, and the same content encoded again meanwhile: that one, held by others.
    if (kept?.holders === 0) kept = this.byKey.get(kept.key) ?? kept;
    if (!kept) {
      kept = this.byDigest(host, `virtual_hosts[${i}]`, configuration);
      this.byObject.set(host, kept);
    }
    return kept;
  }

  /** A host not seen as this object: its encoding found by the digest of its JSON, or made. */
  private byDigest(host: Json, at: string, configuration: string): KeptEncoding {
    this.hashedHosts++;
    const key = createHash('sha256').update(JSON.stringify(host)).digest('base64');
    const kept = this.byKey.get(key) ?? this.fresh.get(key);
    if (kept) return kept;
    this.encodedHosts++;
    const value = encodeAny({ '@type': TYPE_VIRTUAL_HOST, ...host }, at).value;
    // In byKey once the list holds it.
    const name = String(host['name']);
    const made = this.named
      ? namedEncoding(key, name, value, `${configuration}/${name}`)
      : { [KEPT]: true as const, key, name, bytes: value, id: undefined, value: undefined, holders: 0 };
    this.fresh.set(key, made);
    return made;
  }
}

/** A host's encoding kept as its VHDS resource's bytes, `id` after them, and a view of their start. */
function namedEncoding(key: string, name: string, bytes: Uint8Array, id: string): KeptEncoding {
  const value = renamed(bytes, id);
  return { [KEPT]: true, key, name, bytes: value.subarray(0, bytes.length), id, value, holders: 0 };
}

/** The configuration without its hosts, then each host under the virtual_hosts field's number. */
function withHosts(head: Uint8Array, encoded: readonly Uint8Array[], field: number): Buffer {
  const tag = (field << 3) | LEN;
  let size = head.length;
  for (const b of encoded) size += varintSize(tag) + varintSize(b.length) + b.length;
  const configuration = Buffer.allocUnsafe(size);
  configuration.set(head, 0);
  let at = head.length;
  for (const b of encoded) {
    at = writeVarint(configuration, at, tag);
    at = writeVarint(configuration, at, b.length);
    configuration.set(b, at);
    at += b.length;
  }
  return configuration;
}
