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
import type { RouteFileEncoder } from './route-files.js';

/** One generation's route configurations for one kind of Envoy, both ways. */
export interface EncodedRoutes {
  /** Name → the whole RouteConfiguration (state of the world). */
  readonly whole: ReadonlyMap<string, Resource>;
  /** Name → the RouteConfiguration without virtual hosts, with `vhds` (delta). */
  readonly heads: ReadonlyMap<string, Resource>;
  /** `<route configuration>/<hostname>` → the VirtualHost (delta). */
  readonly virtualHosts: ReadonlyMap<string, Resource>;
}

// VirtualHost.name is field 1, length-delimited.
const VIRTUAL_HOST_NAME_TAG = (1 << 3) | 2;

/**
 * A route configuration with no virtual host (a port no route attached to) gets this one:
 * Envoy waits for a first VHDS update of each route configuration, and none would come. Any
 * host, no route: a request gets the 404 it gets with no virtual host. The name has no hostname's
 * shape, so no real host is ever named so.
 */
const NO_HOST = '(none)';

/** A virtual host's encoding under another name. */
function renamed(bytes: Uint8Array, name: string): Buffer {
  const tail = protobuf.Writer.create().uint32(VIRTUAL_HOST_NAME_TAG).string(name).finish();
  return Buffer.concat([bytes, tail]);
}

/** The route configurations of one generation, for both kinds of stream. */
export function encodeRoutes(encoder: RouteFileEncoder, configurations: readonly Json[]): EncodedRoutes {
  const whole = new Map<string, Resource>();
  const heads = new Map<string, Resource>();
  const virtualHosts = new Map<string, Resource>();
  encoder.begin();
  for (const rc of configurations) {
    const name = rc['name'] as string;
    const parts = encoder.parts(rc);
    whole.set(name, resource(name, { type_url: TYPE_ROUTE_CONFIGURATION, value: encoder.joined(parts) }));
    const { virtual_hosts: _hosts, ...rest } = rc;
    const head = encodeAny({ '@type': TYPE_ROUTE_CONFIGURATION, ...rest, vhds: VHDS }, `${name} (VHDS)`);
    heads.set(name, resource(name, head));
    const { hosts } = parts;
    for (const h of hosts) {
      const id = `${name}/${h.name}`;
      virtualHosts.set(id, resource(id, { type_url: TYPE_VIRTUAL_HOST, value: renamed(h.bytes, id) }));
    }
    if (hosts.length === 0) {
      const id = `${name}/${NO_HOST}`;
      const empty = encodeAny({ '@type': TYPE_VIRTUAL_HOST, name: id, domains: ['*'] }, id);
      virtualHosts.set(id, resource(id, empty));
    }
  }
  encoder.end();
  return { whole, heads, virtualHosts };
}

/** The route configuration a VirtualHost resource belongs to (its name up to the last `/`). */
export function routeConfigurationOf(virtualHost: string): string {
  return virtualHost.slice(0, virtualHost.lastIndexOf('/'));
}
