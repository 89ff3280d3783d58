// Misdirected requests on HTTPS ports (RFC 9110 §15.5.20, upstream's
// HTTPSListenerDetectMisdirectedRequests): Envoy picks a port's filter chain by SNI, one per
// listener hostname; a request on that connection whose Host belongs to another listener of the
// port (listener-isolation.ts) is answered 421, so the client retries on a connection of its
// own. Each chain gets a route configuration of its own: the port's virtual hosts its listener
// owns as they are, every other one answering 421. Only HTTPS ports whose listeners have
// different hostnames get chains; every other port keeps its one route configuration.
import type { IrSniChain, IrVirtualHost } from './gateway-ir.js';
import type { Isolation } from './listener-isolation.js';

function misdirectedHost(hostname: string): IrVirtualHost {
  return { hostname, entries: [], countsAttempts: false, misdirected: true };
}

export function sniChains(
  portName: string,
  hosts: readonly IrVirtualHost[],
  isolation: Isolation,
): IrSniChain[] {
  const misdirected = new Map(hosts.map((h) => [h.hostname, misdirectedHost(h.hostname)]));
  const catchAll = misdirected.get('*') ?? misdirectedHost('*');
  return isolation.keys.map((owner) => {
    const own = hosts.map((h) =>
      isolation.ownerOf(h.hostname) === owner ? h : (misdirected.get(h.hostname) as IrVirtualHost),
    );
    // A host no virtual host names belongs to no listener here, or to the one without a hostname.
    if (!own.some((h) => h.hostname === '*') && owner !== '*') own.push(catchAll);
    return {
      hostname: owner,
      name: `${portName}/sni/${owner === '*' ? 'default' : owner}`,
      virtualHosts: own,
    };
  });
}
