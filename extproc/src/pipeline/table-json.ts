// The policy table as it crosses from the compiler thread to the service, route by route
// (piece-list.ts): a route the service holds from the last table crosses as its position
// there, so a change to one route among 10,000 copies one route's text across, the service
// parses one route, and every other route stays the same object in the next table — what is
// generated from a route is kept while it is (envoy/generation-memo.ts). Neither side keeps a
// route's text: the writer keeps each route's digest, the reader the routes it parsed. The
// table's digest (policy/table-digest.ts) is taken over the routes' digests.
import { POLICY_TABLE_VERSION, type PolicyTable, type TableRoute } from '../policy/policy-table.js';
import { tableDigest } from '../policy/table-digest.js';
import {
  type PackedPieceList,
  type PieceList,
  PieceReader,
  PieceWriter,
  type TextPack,
} from './piece-list.js';

export interface TableJson {
  readonly version: number;
  /** This table, for the next request's `held`. */
  readonly id: number;
  /** The listeners' JSON (an array). */
  readonly listeners: string;
  /** Each route in table order: its JSON, or its position in the table the reader holds. */
  readonly routes: PieceList;
}

/** A table as it crosses from the compiler thread: its routes packed (piece-list.ts). */
export interface PackedTableJson extends Omit<TableJson, 'routes'> {
  readonly routes: PackedPieceList;
}

/** Writes tables for one reader: the thread keeps one for the service's reader. */
export class TableWriter {
  private readonly routes = new PieceWriter<TableRoute>();

  /**
   * The table as it crosses, and its digest. `held` is the id of the table the reader took
   * last (TableReader.held): only routes of that table cross as positions.
   */
  write(
    table: PolicyTable,
    id: number,
    held: number | undefined,
    pack?: TextPack,
  ): { json: TableJson; digest: string } {
    const { list, digests } = this.routes.write(table.routes, id, held, pack);
    const listeners = JSON.stringify(table.listeners);
    const json: TableJson = { version: table.version, id, listeners, routes: list };
    return { json, digest: tableDigest(table.version, listeners, digests) };
  }
}

/** Reads tables from one writer, keeping the routes of the last one for the next. */
export class TableReader {
  private readonly routes = new PieceReader<TableRoute>('policy table');

  /** The id of the last table read, for the writer. */
  get held(): number | undefined {
    return this.routes.held;
  }

  read(parts: TableJson | PackedTableJson): PolicyTable {
    if (parts.version !== POLICY_TABLE_VERSION) throw new Error(`policy table version ${parts.version}`);
    const routes = this.routes.read(parts.routes, parts.id, (text) => JSON.parse(text) as TableRoute);
    return {
      version: POLICY_TABLE_VERSION,
      listeners: JSON.parse(parts.listeners) as PolicyTable['listeners'],
      routes,
    };
  }
}
