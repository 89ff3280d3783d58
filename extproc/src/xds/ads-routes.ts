// Route configurations as each kind of ADS stream takes them. State of the world: every one
// whole, its virtual hosts inside. Delta (VHDS): every one without its virtual hosts, naming
// the ADS stream as their source, and each virtual host a resource of its own named
// `<route configuration>/<hostname>`, so that a one-route change sends the host it changed.
//
// Envoy files a VirtualHost under the route configuration its name begins with (up to the last
// `/`), and removes one by its `name` field: a host's resource name and `name` are the same.
// A host is encoded once for both (route-files.ts keeps the encodings across generations): the
// VHDS resource is those bytes followed by the new name, as protobuf takes a singular field's
// last value.
import protobuf from 'protobufjs';
import { TYPE_ROUTE_CONFIGURATION } from '../envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST, VHDS } from '../envoy/xds-resources.js';
import type { Json } from '../json.js';
import { type Resource, resource } from './ads-resource.js';
import { encodeAny } from './envoy-protos.js';
import { RouteFileEncoder, type RouteParts } from './route-files.js';

/** A VirtualHost resource, and the host's encoding it was made from. */
interface KeptHost {
  readonly bytes: Uint8Array;
  readonly resource: Resource;
}

/**
 * One generation's route configurations for one kind of Envoy, both ways. The whole ones and the
 * virtual hosts are functions, called when a stream first asks for them (ads-stream.ts
 * LazyEncoded): a fleet of delta Envoys never needs the whole ones, 5 MB per generation at
 * 10,000 routes.
 */
export interface EncodedRoutes {
  /** Name → the whole RouteConfiguration (state of the world). */
  readonly whole: () => ReadonlyMap<string, Resource>;
  /** Name → the RouteConfiguration without virtual hosts, with `vhds` (delta). */
  readonly heads: ReadonlyMap<string, Resource>;
  /** `<route configuration>/<hostname>` → the VirtualHost (delta). */
  readonly virtualHosts: () => ReadonlyMap<string, Resource>;
}

// VirtualHost.name is field 1, length-delimited.
const VIRTUAL_HOST_NAME_TAG = (1 << 3) | 2;

/**
 * A route configuration with no virtual host (a port no route attached to) gets this one: Envoy
 * 1.40 serves one without it, but Envoy's current source starts the VHDS subscription within the
 * route configuration update's initialization, which a host-less one, never reached by a VHDS
 * update, could hold back. Any host, no route: a request gets the 404 it gets with no virtual host.
 * The name has no hostname's shape, so no real host is ever named so.
 */
const NO_HOST = '(none)';

/** The virtual host of a route configuration without any: any host, no route. */
function noHost(id: string): Resource {
  return resource(id, encodeAny({ '@type': TYPE_VIRTUAL_HOST, name: id, domains: ['*'] }, id));
}

/** A virtual host's encoding under another name. */
function renamed(bytes: Uint8Array, name: string): Buffer {
  const tail = protobuf.Writer.create().uint32(VIRTUAL_HOST_NAME_TAG).string(name).finish();
  return Buffer.concat([bytes, tail]);
}

/**
 * The route configurations every kind of Envoy shares, generation after generation: each host encoded once
 * (route-files.ts), and its VirtualHost resource made once while the host stays the same, so a
 * one-route change makes one resource anew, not 10,000.
 */
export class RouteResources {
  private readonly encoder = new RouteFileEncoder();
  /**
   * By route configuration, then by hostname: the VirtualHost resource last made, and the host's
   * encoding it was made from (the encoder's object, the same while the host is).
   */
  private readonly virtualHostCache = new Map<string, Map<string, KeptHost>>();

  /**
   * The route configurations of one generation, for both kinds of stream. Every host is encoded
   * (and checked) now; a way's resources are put together when first asked for.
   */
  encode(configurations: readonly Json[]): EncodedRoutes {
    const heads = new Map<string, Resource>();
    this.encoder.begin();
    // What the ways are made of later: names and encodings, not the configurations' JSON.
    const all = configurations.map((rc) => {
      const name = rc['name'] as string;
      // Made now, as an error must stop the generation here (they are small).
      heads.set(name, this.head(name, rc));
      return { name, parts: this.encoder.parts(rc) };
    });
    this.encoder.end();
    // Each made once, whichever kinds of Envoy share this generation's routes (ads-server.ts).
    let whole: ReadonlyMap<string, Resource> | undefined;
    let virtualHosts: ReadonlyMap<string, Resource> | undefined;
    const makeWhole = () =>
      new Map(
        all.map(({ name, parts }) => {
          const value = this.encoder.joined(parts);
          return [name, resource(name, { type_url: TYPE_ROUTE_CONFIGURATION, value })];
        }),
      );
    const makeVirtualHosts = () => {
      const made = new Map<string, Resource>();
      for (const { name, parts } of all) {
        for (const r of this.virtualHostsOf(name, parts.hosts)) made.set(r.name, r);
        if (parts.hosts.length === 0) made.set(`${name}/${NO_HOST}`, noHost(`${name}/${NO_HOST}`));
      }
      this.forgetConfigurationsBut(all);
      return made;
    };
    return {
      whole: () => (whole ??= makeWhole()),
      heads,
      virtualHosts: () => (virtualHosts ??= makeVirtualHosts()),
    };
  }

  /** A route configuration without its virtual hosts, naming ADS as their source. */
  private head(name: string, rc: Json): Resource {
    const { virtual_hosts: _hosts, ...rest } = rc;
    return resource(
      name,
      encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...rest, vhds: VHDS }, `${name} (VHDS)`),
    );
  }

  /**
   * A route configuration's VirtualHost resources, in its hosts' order: a host whose encoding is
   * the one its resource was made from keeps that resource (found by its hostname, without
   * making its resource name again); hosts the configuration no longer has are let go.
   */
  private virtualHostsOf(name: string, hosts: RouteParts['hosts']): Resource[] {
    let kept = this.virtualHostCache.get(name);
    if (!kept) this.virtualHostCache.set(name, (kept = new Map()));
    const made = hosts.map((h) => {
      let k = kept.get(h.name);
      if (k?.bytes !== h.bytes) {
        const id = `${name}/${h.name}`;
        k = {
          bytes: h.bytes,
          resource: resource(id, { type_url: TYPE_VIRTUAL_HOST, value: renamed(h.bytes, id) }),
        };
        kept.set(h.name, k);
      }
      return k.resource;
    });
    if (kept.size > hosts.length) {
      const now = new Set(hosts.map((h) => h.name));
      for (const hostname of kept.keys()) if (!now.has(hostname)) kept.delete(hostname);
    }
    return made;
  }

  /** Lets go of the kept hosts of route configurations a generation no longer has. */
  private forgetConfigurationsBut(all: readonly { readonly name: string }[]): void {
    if (this.virtualHostCache.size <= all.length) return;
    const now = new Set(all.map((c) => c.name));
    for (const name of this.virtualHostCache.keys()) if (!now.has(name)) this.virtualHostCache.delete(name);
  }
}

/** The route configuration a VirtualHost resource belongs to (its name up to the last `/`). */
export function routeConfigurationOf(virtualHost: string): string {
  return virtualHost.slice(0, virtualHost.lastIndexOf('/'));
}
