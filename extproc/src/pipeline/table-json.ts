// The policy table as it crosses from the compiler thread to the service, route by route.
// The writer (on the thread) sends a route's JSON only when the reader does not hold it
// already: a route whose JSON is that of a route in the last table the reader took crosses
// as that route's position. A change to one route among 10,000 then copies one route's text
// across, the reader parses one route, and every other route stays the same object in the
// next table, so what is generated from a route is kept while it is (envoy/generation-memo.ts).
// Neither side keeps a route's text once it has crossed: the writer keeps each route's
// digest, the reader the routes it parsed.
//
// The table's digest (table/table-digest.ts) is taken over those digests, so it too needs no
// route's text once the route was digested.
import { POLICY_TABLE_VERSION, type PolicyTable, type TableRoute } from '../table/policy-table.js';
import { routeDigest, tableDigest } from '../table/table-digest.js';

export interface TableJson {
  readonly version: number;
  /** This table, for the next request's `held`. */
  readonly id: number;
  /** The listeners' JSON (an array). */
  readonly listeners: string;
  /**
   * Each route in table order: its JSON, or its position in table `base` (which the reader
   * said it holds).
   */
  readonly routes: ReadonlyArray<string | number>;
  readonly base?: number;
}

/** Writes tables for one reader: the thread keeps one for the service's reader. */
export class TableWriter {
  private readonly digests = new WeakMap<TableRoute, string>();
  /** The last table written: its id, and each route's position by digest. */
  private last: { readonly id: number; readonly at: ReadonlyMap<string, number> } | undefined;

  /**
   * The table as it crosses, and its digest. `held` is the id of the table the reader took
   * last (TableReader.held): only routes of that table cross as positions.
   */
  write(table: PolicyTable, id: number, held: number | undefined): { json: TableJson; digest: string } {
    const base = held !== undefined && this.last?.id === held ? this.last.at : undefined;
    const at = new Map<string, number>();
    const digests: string[] = [];
    const routes = table.routes.map((route, i) => {
      let digest = this.digests.get(route);
      let text: string | undefined;
      if (digest === undefined) {
        text = JSON.stringify(route);
        digest = routeDigest(text);
        this.digests.set(route, digest);
      }
      digests.push(digest);
      if (!at.has(digest)) at.set(digest, i);
      const before = base?.get(digest);
      return before ?? text ?? JSON.stringify(route);
    });
    const listeners = JSON.stringify(table.listeners);
    this.last = { id, at };
    const json: TableJson = {
      version: table.version,
      id,
      listeners,
      routes,
      ...(base && held !== undefined ? { base: held } : {}),
    };
    return { json, digest: tableDigest(table.version, listeners, digests) };
  }
}

/** Reads tables from one writer, keeping the routes of the last one for the next. */
export class TableReader {
  private last: { readonly id: number; readonly routes: readonly TableRoute[] } | undefined;

  /** The id of the last table read, for the writer. */
  get held(): number | undefined {
    return this.last?.id;
  }

  read(parts: TableJson): PolicyTable {
    if (parts.version !== POLICY_TABLE_VERSION) throw new Error(`policy table version ${parts.version}`);
    const base = parts.base === undefined ? undefined : this.last;
    if (parts.base !== undefined && base?.id !== parts.base) {
      throw new Error(`policy table ${parts.id} refers to table ${parts.base}, which is not held`);
    }
    const routes = parts.routes.map((r) => {
      if (typeof r === 'string') return JSON.parse(r) as TableRoute;
      const route = base?.routes[r];
      if (route === undefined)
        throw new Error(`policy table ${parts.id}: no route ${r} in table ${parts.base}`);
      return route;
    });
    this.last = { id: parts.id, routes };
    return {
      version: POLICY_TABLE_VERSION,
      listeners: JSON.parse(parts.listeners) as PolicyTable['listeners'],
      routes,
    };
  }
}
