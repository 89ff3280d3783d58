// The route files of the file-fed Envoy are protobuf, assembled from virtual hosts encoded
// one by one and kept between generations: what Envoy decodes must be exactly the route
// configuration the generator wrote, whether a host was encoded now or kept from before.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { TYPE_ROUTE_CONFIGURATION } from '../../extproc/src/envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../../extproc/src/envoy/xds-resources.js';
import { decodeAny, encodeAny, envoyProtoRoot } from '../../extproc/src/xds/envoy-protos.js';
import { RouteFileEncoder } from '../../extproc/src/xds/route-files.js';
import { pick, rng } from '../resolve/random-table.js';

type Json = Record<string, unknown>;

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'envoy', 'testdata');
const goldens = readdirSync(dir).filter((f) => f.endsWith('.out.yaml'));

/** Every inline route configuration of a golden's listeners (gateway mode writes them as RDS). */
function routeConfigurations(file: string): Json[] {
  const config = parse(readFileSync(join(dir, file), 'utf8')) as {
    static_resources: { listeners?: { filter_chains?: { filters?: { typed_config?: Json }[] }[] }[] };
  };
  const out: Json[] = [];
  for (const l of config.static_resources.listeners ?? []) {
    for (const chain of l.filter_chains ?? []) {
      for (const f of chain.filters ?? []) {
        const rc = f.typed_config?.['route_config'];
        if (rc) out.push(rc as Json);
      }
    }
  }
  return out;
}

/** The file as Envoy reads it: a DiscoveryResponse holding one RouteConfiguration. */
function readFile(bytes: Uint8Array): { version: string; configurations: Json[] } {
  const type = envoyProtoRoot().lookupType('envoy.service.discovery.v3.DiscoveryResponse');
  const response = type.toObject(type.decode(bytes)) as {
    version_info: string;
    resources: { type_url: string; value: Uint8Array }[];
  };
  for (const r of response.resources) expect(r.type_url).toBe(TYPE_ROUTE_CONFIGURATION);
  return { version: response.version_info, configurations: response.resources.map((r) => decodeAny(r)) };
}

/** The configuration as encoding it in one piece gives it. */
const whole = (rc: Json): Json => decodeAny(encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...rc }));

function encodeOnce(encoder: RouteFileEncoder, rc: Json, version: string): Uint8Array {
  encoder.begin();
  const bytes = encoder.encode(rc, version);
  encoder.end();
  return bytes;
}

describe('route files as protobuf', () => {
  const all = goldens.flatMap((f) => routeConfigurations(f).map((rc) => [f, rc] as const));

  it('the goldens hold route configurations to test with', () => {
    expect(all.length).toBeGreaterThan(10);
  });

  for (const [file, rc] of all) {
    it(`${file} ${String(rc['name'])}: decodes to the configuration, field for field`, () => {
      const read = readFile(encodeOnce(new RouteFileEncoder(), rc, '7'));
      expect(read.version).toBe('7');
      expect(read.configurations).toEqual([whole(rc)]);
    });
  }

  it("encodes the configuration the ADS server sends byte for byte as it stands in the file's Any", () => {
    const encoder = new RouteFileEncoder();
    for (const [, rc] of all) {
      encoder.begin();
      const message = encoder.configuration(rc);
      const file = encoder.encode(rc, '1');
      encoder.end();
      const decoded = decodeAny({
        type_url: TYPE_ROUTE_CONFIGURATION,
        value: Buffer.from(message),
      });
      expect(decoded).toEqual(whole(rc));
      expect(Buffer.from(file).includes(Buffer.from(message))).toBe(true);
    }
  });

  it('a change to one virtual host encodes that host alone, and the file is the new configuration', () => {
    const hosts = Array.from({ length: 50 }, (_, i) => ({
      name: `host-${i}`,
      domains: [`h${i}.example`],
      routes: [{ match: { prefix: `/r/${i}` }, route: { cluster: 'backend/a', timeout: '15s' } }],
    }));
    const encoder = new RouteFileEncoder();
    const first = { name: 'listener', virtual_hosts: hosts };
    readFile(encodeOnce(encoder, first, '1'));
    expect(encoder.encodedHosts).toBe(50);

    const edited = structuredClone(hosts);
    (edited[17] as { routes: { match: { prefix: string } }[] }).routes[0]!.match.prefix = '/edited';
    const second = { name: 'listener', virtual_hosts: edited, validate_clusters: false };
    const read = readFile(encodeOnce(encoder, second, '2'));
    expect(encoder.encodedHosts).toBe(1);
    expect(read.configurations).toEqual([whole(second)]);

    // Hosts the last generation did not use are not kept by their content: going back, as
    // new objects, encodes the old host again.
    readFile(encodeOnce(encoder, structuredClone(first), '3'));
    expect(encoder.encodedHosts).toBe(1);
  });

  it('takes a host object it encoded before as it is, without writing it out or hashing it again', () => {
    const hosts = Array.from({ length: 20 }, (_, i) => ({
      name: `host-${i}`,
      domains: [`h${i}.example`],
      routes: [{ match: { prefix: `/r/${i}` }, route: { cluster: 'backend/a' } }],
    }));
    const encoder = new RouteFileEncoder();
    const first = encodeOnce(encoder, { name: 'listener', virtual_hosts: hosts }, '1');
    expect(encoder.hashedHosts).toBe(20);
    // The generator keeps unchanged hosts as the same objects (envoy/generation-memo.ts).
    const kept = [...hosts];
    kept[3] = { ...hosts[3]!, domains: ['changed.example'] };
    const second = encodeOnce(encoder, { name: 'listener', virtual_hosts: kept }, '1');
    expect(encoder.hashedHosts).toBe(1);
    expect(encoder.encodedHosts).toBe(1);
    expect(readFile(second).configurations).toEqual([whole({ name: 'listener', virtual_hosts: kept })]);
    expect(Buffer.from(encodeOnce(encoder, { name: 'listener', virtual_hosts: hosts }, '1'))).toEqual(
      Buffer.from(first),
    );
  });

  it('with VHDS names, holds each host once: its bytes are the start of its named resource', () => {
    const hosts = Array.from({ length: 3 }, (_, i) => ({
      name: `host-${i}`,
      domains: [`h${i}.example`],
      routes: [{ match: { prefix: `/r/${i}` }, route: { cluster: 'backend/a' } }],
    }));
    const encoder = new RouteFileEncoder(true);
    encoder.begin();
    const { hosts: parts } = encoder.parts({ name: 'listener', virtual_hosts: hosts });
    encoder.end();
    parts.forEach((p, i) => {
      const value = p.value!;
      expect(p.id).toBe(`listener/host-${i}`);
      expect(p.bytes.buffer).toBe(value.buffer);
      expect(p.bytes.byteOffset).toBe(value.byteOffset);
      expect(Buffer.from(value.subarray(0, p.bytes.length))).toEqual(Buffer.from(p.bytes));
      const any = (bytes: Uint8Array) => decodeAny({ type_url: TYPE_VIRTUAL_HOST, value: bytes });
      expect(any(p.bytes)).toEqual(any(encodeAny({ '@type': TYPE_VIRTUAL_HOST, ...hosts[i] }).value));
      expect(any(value)).toEqual({ ...any(p.bytes), name: p.id });
    });
  });

  it('takes a host kept as its encoding (the memo keeps no JSON) where its JSON stood, byte for byte', () => {
    const hosts = Array.from({ length: 10 }, (_, i) => ({
      name: `host-${i}`,
      domains: [`h${i}.example`],
      routes: [{ match: { prefix: `/r/${i}` }, route: { cluster: 'backend/a' } }],
    }));
    for (const named of [false, true]) {
      const encoder = new RouteFileEncoder(named);
      const kept = hosts.map((h) => encoder.keepHost(h, 'listener'));
      // What stands for a host carries its name and encoding, not its JSON.
      expect(kept[3]!['name']).toBe('host-3');
      expect(Object.keys(kept[3]!)).not.toContain('routes');
      expect(Object.keys(kept[3]!)).not.toContain('domains');
      const file = encodeOnce(encoder, { name: 'listener', virtual_hosts: kept }, '1');
      // Counted from the first host kept: each was encoded once, then taken as it is.
      expect(encoder.encodedHosts).toBe(10);
      const fresh = encodeOnce(new RouteFileEncoder(), { name: 'listener', virtual_hosts: hosts }, '1');
      expect(Buffer.from(file)).toEqual(Buffer.from(fresh));
      // The next generation lists the same kept hosts: nothing is encoded or hashed.
      expect(Buffer.from(encodeOnce(encoder, { name: 'listener', virtual_hosts: [...kept] }, '2'))).toEqual(
        Buffer.from(encodeOnce(new RouteFileEncoder(), { name: 'listener', virtual_hosts: hosts }, '2')),
      );
      expect([encoder.encodedHosts, encoder.hashedHosts]).toEqual([0, 0]);
    }
  });

  it('refuses a host kept as its encoding that Envoy would read differently, naming its configuration and host', () => {
    expect(() => new RouteFileEncoder().keepHost({ name: 'h', domains: ['*'], routez: [] }, 'l')).toThrow(
      /route configuration l, virtual host h.*routez/,
    );
  });

  it('refuses a host Envoy would read differently, naming it', () => {
    const bad = { name: 'l', virtual_hosts: [{ name: 'h', domains: ['*'], routez: [] }] };
    expect(() => encodeOnce(new RouteFileEncoder(), bad, '1')).toThrow(/virtual_hosts\[0\].*routez/);
  });

  for (const seed of [1, 2, 3, 4]) {
    it(`after every step of random edits, encodes what a fresh encoder does and keeps no more than it used (seed ${seed})`, () => {
      const rnd = rng(seed);
      const host = (n: number, path: string): Json => ({
        name: `host-${n}`,
        domains: [`h${n}.example`],
        routes: [{ match: { prefix: path }, direct_response: { status: 200 } }],
      });
      let hosts: Json[] = Array.from({ length: 8 }, (_, n) => host(n, '/'));
      const seen: Json[] = [...hosts];
      const encoder = new RouteFileEncoder();
      for (let step = 0; step < 60; step++) {
        const next = [...hosts];
        const at = Math.floor(rnd() * next.length);
        const r = rnd();
        // A host changed, removed, added, copied (same content, new object) or an old one back.
        if (r < 0.3) next[at] = host(at, pick(rnd, ['/', '/a', '/b']));
        else if (r < 0.45 && next.length > 1) next.splice(at, 1);
        else if (r < 0.6) next.splice(at, 0, host(100 + step, '/'));
        else if (r < 0.8) next[at] = structuredClone(next[at] as Json);
        else next[at] = pick(rnd, seen);
        seen.push(...next.filter((h) => !seen.includes(h)));
        hosts = next;
        const rc = { name: 'listener', virtual_hosts: hosts };
        expect(Buffer.from(encodeOnce(encoder, rc, '1'))).toEqual(
          Buffer.from(encodeOnce(new RouteFileEncoder(), rc, '1')),
        );
        expect(encoder.keptHosts).toBeLessThanOrEqual(hosts.length);
      }
    });
  }
});
