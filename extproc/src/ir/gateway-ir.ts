// The IR: the policy table in Envoy's shape with every decision taken, which gateway mode's
// generator (envoy/), the attach snippet and the resolver (resolve/) read; the Snapshot holds
// it (pipeline/snapshot.ts), build-ir.ts makes it. One port per Envoy listener, holding the
// Gateway listeners that share it and the routes it serves (narrowed to the hostnames it serves
// them for, in table order: the resolver's age tie-break); per port, the virtual hosts with one
// entry per match in the order Envoy must try them, each rule's action decided
// (rule-action.ts: forward with the router plan, redirect, or 500), matches RE2 would refuse
// left out; and the clusters, shared and named (cluster-sharing.ts).
import type { TableListener, TableRoute } from '../policy/policy-table.js';
import type { IrCluster } from './cluster-sharing.js';
import type { IrEntry } from './rule-action.js';

/** A route as one port serves it, with its place in the table. */
export interface ServedRoute {
  readonly route: TableRoute;
  /** The route's index in the table: equal precedence goes to the older (earlier) route. */
  readonly order: number;
}

export interface IrVirtualHost {
  /** `shop.example.com`, `*.example.com` or `*` (any host). */
  readonly hostname: string;
  /** First match wins, so this order is Gateway API precedence. */
  readonly entries: readonly IrEntry[];
  /** Some rule here holds retries to a backoff floor: the router counts attempts. */
  readonly countsAttempts: boolean;
  /** Another listener's host on an SNI chain of an HTTPS port (misdirected.ts): answered 421. */
  readonly misdirected?: boolean;
}

/** One SNI filter chain's routes. */
export interface IrSniChain {
  /** The listener hostname the chain serves (`*`: the listener without one, any SNI). */
  readonly hostname: string;
  /** Its route configuration's name: `<port name>/sni/<hostname>` (`default` for `*`). */
  readonly name: string;
  /** The port's virtual hosts, those of other listeners misdirected; `*` is one of them when another listener owns it. */
  readonly virtualHosts: readonly IrVirtualHost[];
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
  /** Gateway mode's virtual hosts (built on first read). */
  readonly virtualHosts: readonly IrVirtualHost[];
  /**
   * HTTPS ports whose listeners have different hostnames: one route configuration per SNI
   * filter chain, answering 421 for other listeners' hosts (misdirected.ts); undefined elsewhere.
   */
  readonly sniChains: readonly IrSniChain[] | undefined;
  /** The matches left out of the virtual hosts, and why. */
  readonly warnings: readonly string[];
}

export interface GatewayIr {
  readonly listeners: readonly TableListener[];
  /** Every route, in table order (served on a port or not). */
  readonly routes: readonly TableRoute[];
  readonly ports: readonly IrPort[];
  /** The clusters every rule's targets and mirrors name, each once, in the order rules first name them. */
  readonly clusters: readonly IrCluster[];
  /** Gateway listeners no port serves, and why (another protocol, or one that holds their port). */
  readonly warnings: readonly string[];
  /** Lower-case names of the request headers matches read (besides the request line). */
  readonly headersRead: readonly string[];
  /** The table's digest: equal tables, equal digests. */
  readonly digest: string;
}

/** The ports a route is served on. */
export function routePorts(ir: GatewayIr, routeId: string): number[] {
  return ir.ports.filter((p) => p.routes.some((r) => r.route.id === routeId)).map((p) => p.port);
}
