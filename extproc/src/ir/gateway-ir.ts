// The policy table in Envoy's shape, which both consumers read: one port per Envoy listener,
// holding the Gateway listeners that share it and the routes it serves (narrowed to the
// hostnames it serves them for, in table order: the resolver's age tie-break); and, for gateway
// mode, a port's virtual hosts with their matches in the order Envoy must try them. Pure.
import type { PolicyTable, TableListener, TableMatch, TableRoute, TableRule } from '../table/policy-table.js';
import { POLICY_TABLE_VERSION } from '../table/policy-table.js';
import { portGroups, servedOn } from './listener-ports.js';
import { virtualHosts } from './virtual-hosts.js';

/** A route as one port serves it, with its place in the table. */
export interface ServedRoute {
  readonly route: TableRoute;
  /** The route's index in the table: equal precedence goes to the older (earlier) route. */
  readonly order: number;
}

/** One Gateway port: one Envoy listener in gateway mode, one resolver index in attach mode. */
export interface IrPort {
  readonly port: number;
  /** HTTP or HTTPS: the protocol of the port's first listener. */
  readonly protocol: string;
  /** The Envoy listener's name: the Gateway listener's id when it is alone on the port, else `port/<n>`. */
  readonly name: string;
  readonly listeners: readonly TableListener[];
  /** The routes served here, each with at least one hostname, in table order. */
  readonly routes: readonly ServedRoute[];
}

export interface GatewayIr {
  readonly ports: readonly IrPort[];
  /** Gateway listeners no port serves, and why (another protocol already holds their port). */
  readonly warnings: readonly string[];
}

export interface IrEntry {
  readonly rule: TableRule;
  readonly match: TableMatch;
}

export interface IrVirtualHost {
  /** `shop.example.com`, `*.example.com` or `*` (any host). */
  readonly hostname: string;
  /** First match wins, so this order is Gateway API precedence. */
  readonly entries: readonly IrEntry[];
}

export function gatewayIr(table: PolicyTable): GatewayIr {
  const warnings: string[] = [];
  const ports = portGroups(table, (w) => warnings.push(w)).map((group): IrPort => {
    const routes: ServedRoute[] = [];
    table.routes.forEach((route, order) => {
      const served = servedOn(route, group);
      if (served.hostnames.length > 0) routes.push({ route: served, order });
    });
    return {
      port: group.port,
      protocol: group.protocol,
      name: group.listeners.length === 1 ? (group.listeners[0] as TableListener).id : `port/${group.port}`,
      listeners: group.listeners,
      routes,
    };
  });
  return { ports, warnings };
}

/** A port's virtual hosts and their matches in the order Envoy must try them (gateway mode). */
export function portVirtualHosts(port: IrPort): IrVirtualHost[] {
  const routes = port.routes.map((r) => r.route);
  const byMatch = new Map<string, IrEntry>();
  for (const route of routes) {
    for (const rule of route.rules) for (const match of rule.matches) byMatch.set(match.id, { rule, match });
  }
  // The routes keep the table's order, so the resolver's age tie-break holds here too.
  const table: PolicyTable = { version: POLICY_TABLE_VERSION, listeners: [], routes };
  return virtualHosts(table).map((vh) => ({
    hostname: vh.hostname,
    entries: vh.matches.flatMap((m) => {
      const entry = byMatch.get(m.matchId);
      return entry ? [entry] : [];
    }),
  }));
}

/** The ports a route is served on. */
export function routePorts(ir: GatewayIr, routeId: string): number[] {
  return ir.ports.filter((p) => p.routes.some((r) => r.route.id === routeId)).map((p) => p.port);
}
