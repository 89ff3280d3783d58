// What a port's virtual hosts were made of at the last IR build, so that a change to one route
// among 10,000 builds the virtual hosts of that route's hostnames alone. An exact hostname's
// virtual host is a function of the routes of that hostname, of the wildcards covering it and
// of `*` (in table order: precedence compares routes' order, never its value), and of the port's
// listeners (isolation): it is kept while those are the same objects in the same order. When a
// wildcard's or `*`'s routes or the listeners change, every virtual host of the port is built
// again. A test holds the kept IR equal to a fresh build after random edit sequences.
import type { TableListener, TableRoute } from '../policy/policy-table.js';
import { sameItems } from '../json.js';
import type { IrVirtualHost, ServedRoute } from './gateway-ir.js';
import type { Isolation } from './listener-isolation.js';
import { touchedHostnames } from './touched-hostnames.js';
import { type VirtualHost, covers, virtualHosts } from './virtual-hosts.js';

/** A virtual host, the warnings its matches gave, and the routes of its hostname it was made of. */
export interface KeptHost {
  readonly routes: readonly TableRoute[];
  readonly host: IrVirtualHost;
  readonly warnings: readonly string[];
}

/** A port's hosts as last built. */
interface KeptPort {
  /** The port's listeners as JSON: isolation is a function of them. */
  readonly listeners: string;
  /** The port's routes, for the next build to find what changed. */
  readonly routes: readonly ServedRoute[];
  /** The routes of each wildcard and of `*`. */
  readonly shared: ReadonlyMap<string, readonly TableRoute[]>;
  /** In the order built: hostnames sorted, `*` last. */
  readonly list: readonly KeptHost[];
  readonly hosts: ReadonlyMap<string, KeptHost>;
}

/** Past this many hostnames touched, the port's hosts are all looked at again (kept where the same). */
const MAX_TOUCHED = 64;

/** Where `hostname` is, or would go, among `list`'s exact hostnames (sorted; `*` may follow them). */
function placeOf(list: readonly KeptHost[], hostname: string): number {
  let lo = 0;
  let hi = list.length;
  if (hi > 0 && (list[hi - 1] as KeptHost).host.hostname === '*') hi--;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as KeptHost).host.hostname < hostname) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const isShared = (hostname: string): boolean => hostname === '*' || hostname.startsWith('*.');

/** Each hostname's routes in table order, the isolation keys (virtual hosts without routes) first. */
function routesByHost(
  routes: readonly ServedRoute[],
  isolation: Isolation | undefined,
): Map<string, ServedRoute[]> {
  const byHost = new Map<string, ServedRoute[]>();
  for (const key of isolation?.keys ?? []) byHost.set(key, []);
  for (const served of routes) {
    for (const h of served.route.hostnames) {
      const list = byHost.get(h);
      if (list) list.push(served);
      else byHost.set(h, [served]);
    }
  }
  return byHost;
}

function routesOf(list: readonly ServedRoute[] | undefined): TableRoute[] {
  return (list ?? []).map((r) => r.route);
}

/**
 * The virtual host of an exact hostname, from the routes that reach it alone: its own and those
 * of the wildcards and `*` (`shared`, found once per port, not per host rebuilt).
 */
function exactHost(
  hostname: string,
  own: readonly ServedRoute[] | undefined,
  shared: readonly (readonly [string, readonly ServedRoute[]])[],
  isolation: Isolation | undefined,
): VirtualHost {
  const reaching = new Set<ServedRoute>(own);
  for (const [h, list] of shared) if (h === '*' || covers(h, hostname)) for (const r of list) reaching.add(r);
  const subset = [...reaching].sort((a, b) => a.order - b.order).map((r) => r.route);
  return virtualHosts(subset, isolation).find((vh) => vh.hostname === hostname) ?? { hostname, matches: [] };
}

export class PortHostsMemo {
  private ports = new Map<string, KeptPort>();

  /** Lets go of the ports not in this build. */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.ports.keys()) if (!names.has(name)) this.ports.delete(name);
  }

  /**
   * The port's virtual hosts (in virtualHosts' order), each made by `make` from what
   * virtualHosts gives for it, or kept from the last build of this port.
   */
  hosts(
    name: string,
    listeners: readonly TableListener[],
    routes: readonly ServedRoute[],
    isolation: Isolation | undefined,
    make: (vh: VirtualHost) => { host: IrVirtualHost; warnings: readonly string[] },
  ): KeptHost[] {
    const listenersJson = JSON.stringify(listeners);
    const last = this.ports.get(name);
    const touched =
      last?.listeners === listenersJson ? touchedHostnames(last.routes, routes, MAX_TOUCHED) : undefined;
    if (last && touched && ![...touched].some(isShared)) {
      const list = this.touched(last, routes, touched, isolation, make);
      this.ports.set(name, { ...last, routes, list });
      return list;
    }
    return this.built(name, listenersJson, routes, isolation, make);
  }

  /**
   * The last build's hosts with those of the `touched` exact hostnames made again (or gone): the
   * others have the same routes, and the wildcards' and `*`'s are the same (none is touched).
   */
  private touched(
    last: KeptPort,
    routes: readonly ServedRoute[],
    touched: ReadonlySet<string>,
    isolation: Isolation | undefined,
    make: (vh: VirtualHost) => { host: IrVirtualHost; warnings: readonly string[] },
  ): KeptHost[] {
    const byHost = new Map<string, ServedRoute[]>();
    for (const served of routes) {
      for (const h of served.route.hostnames) {
        if (!touched.has(h) && !isShared(h)) continue;
        const list = byHost.get(h);
        if (list) list.push(served);
        else byHost.set(h, [served]);
      }
    }
    const sharedServed = [...byHost].filter(([h]) => isShared(h));
    const list = [...last.list];
    const hosts = last.hosts as Map<string, KeptHost>;
    for (const hostname of touched) {
      const at = placeOf(list, hostname);
      const there = list[at]?.host.hostname === hostname;
      const own = byHost.get(hostname);
      // An isolation key (a listener's hostname) keeps its host without routes.
      if (!own && !isolation?.keys.includes(hostname)) {
        if (there) list.splice(at, 1);
        hosts.delete(hostname);
        continue;
      }
      const kept = hosts.get(hostname);
      const ownRoutes = routesOf(own);
      const host =
        kept && sameItems(kept.routes, ownRoutes)
          ? kept
          : { routes: ownRoutes, ...make(exactHost(hostname, own, sharedServed, isolation)) };
      hosts.set(hostname, host);
      if (there) list[at] = host;
      else list.splice(at, 0, host);
    }
    return list;
  }

  /** Every host of the port, each kept from the last build where the routes that reach it are the same. */
  private built(
    name: string,
    listenersJson: string,
    routes: readonly ServedRoute[],
    isolation: Isolation | undefined,
    make: (vh: VirtualHost) => { host: IrVirtualHost; warnings: readonly string[] },
  ): KeptHost[] {
    const byHost = routesByHost(routes, isolation);
    const sharedServed = [...byHost].filter(([h]) => isShared(h));
    const shared = new Map(sharedServed.map(([h, list]) => [h, routesOf(list)]));
    const last = this.ports.get(name);
    const keep =
      last !== undefined &&
      last.listeners === listenersJson &&
      last.shared.size === shared.size &&
      [...shared].every(([h, list]) => sameItems(last.shared.get(h) ?? [], list) && last.shared.has(h));
    const hostnames = [...byHost.keys()].filter((h) => h !== '*').sort();
    if (byHost.has('*')) hostnames.push('*');
    let made: ReadonlyMap<string, VirtualHost> | undefined;
    const hosts = hostnames.map((hostname): KeptHost => {
      const own = routesOf(byHost.get(hostname));
      const kept = keep ? last.hosts.get(hostname) : undefined;
      if (kept && (isShared(hostname) || sameItems(kept.routes, own))) return kept;
      const vh = keep
        ? exactHost(hostname, byHost.get(hostname), sharedServed, isolation)
        : (made ??= new Map(virtualHosts(routesOf(routes), isolation).map((v) => [v.hostname, v]))).get(
            hostname,
          );
      return { routes: own, ...make(vh ?? { hostname, matches: [] }) };
    });
    this.ports.set(name, {
      listeners: listenersJson,
      routes,
      shared,
      list: hosts,
      hosts: new Map(hosts.map((k) => [k.host.hostname, k])),
    });
    return hosts;
  }
}
