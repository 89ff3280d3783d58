// Route configurations as each kind of ADS stream takes them. State of the world: every one
// whole, its virtual hosts inside. Delta (VHDS): every one without its virtual hosts, naming
// the ADS stream as their source, and each virtual host a resource of its own named
// `<route configuration>/<hostname>`, so that a one-route change sends the host it changed.
//
// Envoy files a VirtualHost under the route configuration its name begins with (up to the last
// `/`), and removes one by its `name` field: a host's resource name and `name` are the same.
// A host is encoded once for both (route-files.ts keeps the encodings across generations): the
// VHDS resource is those bytes followed by the new name, as protobuf takes a singular field's
// last value, and the whole configuration takes the same buffer's start.
import { TYPE_ROUTE_CONFIGURATION } from '../envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST, VHDS } from '../envoy/xds-resources.js';
import type { Json } from '../json.js';
import { type Resource, resource } from './ads-resource.js';
import { type Whole, knownStep } from './ads-delta-step.js';
import { sameEnds } from '../json.js';
import { encodeAny } from './envoy-protos.js';
import { RouteFileEncoder, type RouteParts, renamed } from './route-files.js';

/** A route configuration's VirtualHost resources as last made, one per host's parts (the encoder's objects). */
interface KeptResources {
  readonly hosts: RouteParts['hosts'];
  readonly resources: readonly Resource[];
}

/** The virtual hosts last made, every configuration's, and the resources each had. */
interface LastMade {
  readonly map: ReadonlyMap<string, Resource>;
  readonly configurations: ReadonlyMap<string, KeptResources>;
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
  /**
   * Of the route configurations named, the same names → the VirtualHost with every route saying
   * its own `reset` switch, when the generation has that form (gateway-config.ts): sent before a
   * changed head (ads-server.ts). Each configuration's made once, when first asked for.
   */
  readonly explicitHosts?: (configurations: ReadonlySet<string>) => ReadonlyMap<string, Resource>;
}

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

/**
 * The route configurations every kind of Envoy shares, generation after generation: each host encoded once
 * (route-files.ts), and its VirtualHost resource made once while the host stays the same, so a
 * one-route change makes one resource anew, not 10,000.
 */
export class RouteResources {
  /** Each host encoded with its VHDS name after it: its resource is the encoder's own buffer. */
  private readonly encoder = new RouteFileEncoder(true);
  /**
   * The virtual hosts last made: a route configuration's hosts whose parts are the same objects
   * at the same place from its start or its end keep their resources, a host between keeps its
   * resource while its encoding is the same, and the step from that map to the next is known.
   */
  private last: LastMade | undefined;
  /** A virtual host as the generation memo keeps it: encoded for this encoder, its JSON let go (route-files.ts). */
  keepHost(host: Json, configuration: string): Json {
    return this.encoder.keepHost(host, configuration);
  }

  /** Each route configuration's head as last made, and its JSON written out (it seldom changes). */
  private heads = new Map<string, { readonly json: string; readonly resource: Resource }>();

  /**
   * The route configurations of one generation, for both kinds of stream. Every host is encoded
   * (and checked) now; a way's resources are put together when first asked for.
   */
  encode(
    configurations: readonly Json[],
    explicit?: (names: ReadonlySet<string>) => readonly Json[],
  ): EncodedRoutes {
    const heads = new Map<string, Resource>();
    const madeHeads = new Map<string, { readonly json: string; readonly resource: Resource }>();
    this.encoder.begin();
    // What the ways are made of later: names and encodings, not the configurations' JSON.
    const all = configurations.map((rc) => {
      const name = rc['name'] as string;
      // Made now, as an error must stop the generation here (they are small).
      const head = this.head(name, rc);
      madeHeads.set(name, head);
      heads.set(name, head.resource);
      return { name, parts: this.encoder.parts(rc) };
    });
    this.encoder.end();
    this.heads = madeHeads;
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
    const makeVirtualHosts = () => this.virtualHosts(all);
    const explicitMade = new Map<string, readonly Resource[]>();
    const explicitHosts = (names: ReadonlySet<string>): ReadonlyMap<string, Resource> => {
      const missing = new Set([...names].filter((n) => !explicitMade.has(n)));
      if (missing.size > 0 && explicit) {
        for (const n of missing) explicitMade.set(n, []);
        for (const r of hostResources(explicit(missing)).values())
          (explicitMade.get(routeConfigurationOf(r.name)) as Resource[]).push(r);
      }
      return new Map([...names].flatMap((n) => explicitMade.get(n) ?? []).map((r) => [r.name, r]));
    };
    return {
      whole: () => (whole ??= makeWhole()),
      heads,
      virtualHosts: () => (virtualHosts ??= makeVirtualHosts()),
      ...(explicit ? { explicitHosts } : {}),
    };
  }

  /** A route configuration without its virtual hosts, naming ADS as their source. */
  private head(name: string, rc: Json): { readonly json: string; readonly resource: Resource } {
    const { virtual_hosts: _hosts, ...rest } = rc;
    const json = JSON.stringify(rest);
    const last = this.heads.get(name);
    if (last?.json === json) return last;
    const any = encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...rest, vhds: VHDS }, `${name} (VHDS)`);
    return { json, resource: resource(name, any) };
  }

  /**
   * Every configuration's VirtualHost resources, in order, and the step from the map last made
   * to this one (ads-delta-step.ts), found from what changed between each list's ends.
   */
  private virtualHosts(all: readonly { readonly name: string; readonly parts: RouteParts }[]): Whole {
    const last = this.last;
    const made = new Map<string, Resource>();
    const configurations = new Map<string, KeptResources>();
    // Resources that may differ from the last map's: in this map's order.
    const changed: Resource[] = [];
    // Each configuration's last resources between its ends, whose names may be gone.
    const between = new Map<string, readonly Resource[]>();
    for (const { name, parts } of all) {
      const was = last?.configurations.get(name);
      const { resources, start, end } = this.virtualHostsOf(name, parts.hosts, was);
      for (const r of resources) made.set(r.name, r);
      for (let i = start; i < resources.length - end; i++) changed.push(resources[i] as Resource);
      if (was) between.set(name, was.resources.slice(start, was.resources.length - end));
      if (parts.hosts.length === 0) {
        const none = noHost(`${name}/${NO_HOST}`);
        made.set(none.name, none);
        changed.push(none);
      }
      configurations.set(name, { hosts: parts.hosts, resources });
    }
    if (last) knownStep(last.map, made, changed, this.lost(last, between));
    this.last = { map: made, configurations };
    return made;
  }

  /** The names of the last map that may be gone, in its order: those between ends, and every one of a configuration gone. */
  private lost(last: LastMade, between: ReadonlyMap<string, readonly Resource[]>): string[] {
    const names: string[] = [];
    for (const [name, was] of last.configurations) {
      for (const r of between.get(name) ?? was.resources) names.push(r.name);
      if (was.hosts.length === 0) names.push(`${name}/${NO_HOST}`);
    }
    return names;
  }

  /**
   * A route configuration's VirtualHost resources, in its hosts' order: those at the same place
   * from the start or the end of its last list (the same parts objects) are the last ones; a
   * host between keeps its last resource while its encoding is the same (the encoder's object).
   */
  private virtualHostsOf(
    name: string,
    hosts: RouteParts['hosts'],
    was: KeptResources | undefined,
  ): { resources: Resource[]; start: number; end: number } {
    const { start, end } = was ? sameEnds(was.hosts, hosts) : { start: 0, end: 0 };
    const before = new Map<string, { bytes: Uint8Array; resource: Resource }>();
    if (was) {
      for (let i = start; i < was.hosts.length - end; i++) {
        const h = was.hosts[i] as RouteParts['hosts'][number];
        before.set(h.name, { bytes: h.bytes, resource: was.resources[i] as Resource });
      }
    }
    const middle: Resource[] = [];
    for (let i = start; i < hosts.length - end; i++) {
      const h = hosts[i] as RouteParts['hosts'][number];
      const kept = before.get(h.name);
      if (kept?.bytes === h.bytes) middle.push(kept.resource);
      else middle.push(hostResource(`${name}/${h.name}`, h));
    }
    const resources = was
      ? was.resources.slice(0, start).concat(middle, was.resources.slice(was.resources.length - end))
      : middle;
    return { resources, start, end };
  }
}

/** A host's VirtualHost resource `id`: the encoder's named buffer when it was made for that name (the same content under two names is not). */
function hostResource(id: string, h: RouteParts['hosts'][number]): Resource {
  if (h.id === id && h.value) return resource(h.id, { type_url: TYPE_VIRTUAL_HOST, value: h.value });
  return resource(id, { type_url: TYPE_VIRTUAL_HOST, value: renamed(h.bytes, id) });
}

/**
 * Route configurations' hosts as VirtualHost resources, encoded anew and kept by nobody: the
 * bridge form is made only when a stream's route configuration head changes (rare), so its
 * encodings are not held beside the kept ones.
 */
function hostResources(configurations: readonly Json[]): ReadonlyMap<string, Resource> {
  const encoder = new RouteFileEncoder(true);
  encoder.begin();
  const made = new Map<string, Resource>();
  for (const rc of configurations) {
    const name = rc['name'] as string;
    const { hosts } = encoder.parts(rc);
    for (const h of hosts) {
      const r = hostResource(`${name}/${h.name}`, h);
      made.set(r.name, r);
    }
    // As the generation's own map has it (virtualHosts).
    if (hosts.length === 0) {
      const none = noHost(`${name}/${NO_HOST}`);
      made.set(none.name, none);
    }
  }
  return made;
}

/** The route configuration a VirtualHost resource belongs to (its name up to the last `/`). */
export function routeConfigurationOf(virtualHost: string): string {
  return virtualHost.slice(0, virtualHost.lastIndexOf('/'));
}
