// What one IR build keeps for the next, so that a change to one route among 10,000 decides
// that route alone. Its keys are the table's own objects, which stay the same from one table
// to the next while a route does not change (pipeline/table-json.ts); everything kept is a
// pure function of its key, so a kept value equals a fresh one (a test holds the whole way to
// Envoy equal to a fresh build after random edit sequences). What the IR keeps stays the same
// object, and envoy/generation-memo.ts keeps what it generated from it by that object.
import { HeadersReadMemo } from '../policy/headers-read.js';
import type { TableMatch, TableRule } from '../policy/policy-table.js';
import { ClusterNames, type DecidedClusters } from './cluster-sharing.js';
import { PortHostsMemo } from './port-hosts-memo.js';
import type { IrEntry, IrRule } from './rule-action.js';
import type { RuleClusters } from './rule-clusters.js';

export class IrMemo {
  readonly names = new ClusterNames();
  /** The last build's clusters, in order, with what a next build needs to keep them (build-ir.ts decide). */
  decided: DecidedClusters | undefined;
  /** Each rule's own clusters (none for a rule that fails closed) and decided action. */
  readonly rules = new WeakMap<TableRule, { readonly clusters?: RuleClusters; readonly ir: IrRule }>();
  /** Each match's entry, while its rule's decision is the same object. */
  readonly entries = new WeakMap<TableMatch, IrEntry>();
  /** Each port's virtual hosts, kept by hostname while the routes that reach it are the same. */
  readonly ports = new PortHostsMemo();
  /** The header names the routes' matches read, counted. */
  readonly headers = new HeadersReadMemo();
}
