// The policy table as it crosses from the compiler thread to the service: each route as JSON
// text of its own. The receiving side keeps the routes it parsed, by their text, so a route
// that did not change is the same object in the next table. That makes a change to one route
// among 10,000 cost one route's parse, and lets what is generated from a route be kept while
// the route is the same object (envoy/generation-memo.ts). The whole table's JSON, when it is
// needed, is the pieces joined: byte for byte what JSON.stringify gives for the table.
import { POLICY_TABLE_VERSION, type PolicyTable, type TableRoute } from '../table/policy-table.js';

export interface TableJson {
  readonly version: number;
  /** The listeners' JSON (an array). */
  readonly listeners: string;
  /** Each route's JSON, in table order. */
  readonly routes: readonly string[];
}

/** The table as pieces; `routeJson` may keep a route's text while the route is the same object. */
export function tableJsonOf(
  table: PolicyTable,
  routeJson: (route: TableRoute) => string = (r) => JSON.stringify(r),
): TableJson {
  return {
    version: table.version,
    listeners: JSON.stringify(table.listeners),
    routes: table.routes.map(routeJson),
  };
}

/** The whole table's JSON: byte for byte what JSON.stringify writes for the table. */
export function joinTableJson(parts: TableJson): string {
  return `{"version":${parts.version},"listeners":${parts.listeners},"routes":[${parts.routes.join(',')}]}`;
}

/** Parses tables, keeping each route's object while its text stays the same. */
export class TableReader {
  private last = new Map<string, TableRoute>();

  read(parts: TableJson): PolicyTable {
    if (parts.version !== POLICY_TABLE_VERSION) throw new Error(`policy table version ${parts.version}`);
    const next = new Map<string, TableRoute>();
    const routes = parts.routes.map((text) => {
      const route = this.last.get(text) ?? (JSON.parse(text) as TableRoute);
      next.set(text, route);
      return route;
    });
    this.last = next;
    return {
      version: POLICY_TABLE_VERSION,
      listeners: JSON.parse(parts.listeners) as PolicyTable['listeners'],
      routes,
    };
  }
}
