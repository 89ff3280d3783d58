// The policy table on its way from `steadfast serve --workers N`'s primary to each ext_proc
// worker process, as it crosses from the compiler thread (pipeline/table-json.ts): a route the
// worker holds from the last table crosses as its position there, so a change to one route
// among 10,000 sends one route's text to each worker, and each worker's resolver builds only
// the buckets of the hostnames that changed (resolve/compile.ts ResolverMemo).
import { buildIr } from '../ir/build-ir.js';
import { TableReader, TableWriter } from '../pipeline/table-json.js';
import { type Resolver, ResolverMemo, compileResolver } from '../resolve/compile.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import type { PolicyMessage } from './ext-proc-worker-messages.js';

/** The primary's side, one per worker: what that worker was sent. */
export class WorkerTableSender {
  private readonly writer = new TableWriter();
  private tables = 0;
  /** The last table sent: IPC delivers in order, so the worker holds it unless it refuses it. */
  private sent: number | undefined;
  /** Whether the last table sent was whole (it refers to no other). */
  sentWhole = false;

  /** The snapshot's policy for this worker; `whole` after the worker refused one. */
  message(snapshot: Snapshot, generation: number, whole = false): PolicyMessage {
    const id = ++this.tables;
    const { json } = this.writer.write(snapshot.table, id, whole ? undefined : this.sent);
    this.sent = id;
    this.sentWhole = json.routes.base === undefined;
    return {
      type: 'steadfast:policy',
      generation,
      answerGeneration: snapshot.resolver.generation,
      table: json,
    };
  }
}

/** The worker's side: the resolver of the newest table, kept from one table to the next. */
export class WorkerTableReceiver {
  private readonly reader = new TableReader();
  private readonly memo = new ResolverMemo();

  /** The resolver for a policy message; throws when the message refers to a table not held. */
  apply(m: PolicyMessage): Resolver {
    return compileResolver(buildIr(this.reader.read(m.table)), m.answerGeneration, this.memo);
  }
}
