// Which routes each Gateway port serves: the key both modes share. Gateway mode makes one
// Envoy listener per port; attach mode resolves a request among the routes of the port its
// Envoy listener stands for. Pure: reads only the table.
import type { PolicyTable, TableListener, TableRoute } from '../policy/policy-table.js';
import { METADATA_NAMESPACE } from '../policy/policy-token.js';

/** The key of an Envoy listener's `steadfast` metadata that names its Gateway port (attach mode). */
export const GATEWAY_PORT_METADATA_KEY = 'gateway_port';

/**
 * The ext_proc `request_attributes` attach mode asks Envoy for (CEL expressions; measured on
 * Envoy 1.40: a number in listener metadata arrives as its text, e.g. "80", and an attribute
 * that cannot be evaluated — no such metadata — is left out of the message).
 */
export const ATTRIBUTE_GATEWAY_PORT = `xds.listener_metadata.filter_metadata.${METADATA_NAMESPACE}.${GATEWAY_PORT_METADATA_KEY}`;
/** The local port of the downstream connection, a number. */
export const ATTRIBUTE_DESTINATION_PORT = 'destination.port';

/** The Gateway listeners on one port (of any Gateway): one Envoy listener in gateway mode. */
export interface PortGroup {
  readonly port: number;
  /** HTTP or HTTPS: the protocol of the port's first listener. */
  readonly protocol: string;
  readonly listeners: readonly TableListener[];
}

/**
 * The HTTP and HTTPS listeners grouped by port, in port order. A listener whose protocol
 * differs from the port's first listener is left out, and `warn` says so.
 */
export function portGroups(table: PolicyTable, warn?: (message: string) => void): PortGroup[] {
  const byPort = new Map<number, { port: number; protocol: string; listeners: TableListener[] }>();
  for (const l of table.listeners) {
    if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') continue;
    const group = byPort.get(l.port) ?? { port: l.port, protocol: l.protocol, listeners: [] };
    byPort.set(l.port, group);
    // Listeners of different Gateways may share a port; one port speaks one protocol.
    if (group.protocol !== l.protocol) {
      warn?.(
        `${l.id}: port ${l.port} already serves ${group.protocol}; this ${l.protocol} listener is left out`,
      );
      continue;
    }
    group.listeners.push(l);
  }
  return [...byPort.values()].sort((a, b) => a.port - b.port);
}

/** Whether a listener with this hostname (none: any) serves a route hostname. */
function listenerServes(listenerHostname: string | undefined, hostname: string): boolean {
  if (listenerHostname === undefined || listenerHostname === hostname) return true;
  const suffix = listenerHostname.startsWith('*.') ? listenerHostname.slice(1) : undefined;
  return (
    suffix !== undefined && hostname !== '*' && hostname.endsWith(suffix) && hostname.length > suffix.length
  );
}

/**
 * The route as one port serves it: its effective hostnames are the union over all its
 * listeners, so on this port only those a listener here (that it attaches to) serves.
 * No hostnames when the route is not attached to this port.
 */
export function servedOn(route: TableRoute, group: PortGroup): TableRoute {
  const here = group.listeners.filter((l) => route.listeners.includes(l.id));
  // `*` comes only from a route without hostnames on a listener without one: on a port where
  // every listener it attaches to has no hostname, that is all it is.
  if (here.length > 0 && here.every((l) => l.hostname === undefined) && route.hostnames.includes('*')) {
    return route.hostnames.length === 1 ? route : { ...route, hostnames: ['*'] };
  }
  const hostnames = route.hostnames.filter((h) => here.some((l) => listenerServes(l.hostname, h)));
  return hostnames.length === route.hostnames.length ? route : { ...route, hostnames };
}
