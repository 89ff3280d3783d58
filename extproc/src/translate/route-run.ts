// Translation's walk over the routes, oldest first, taken up from the last one: while what was
// kept of every route still holds (translate/kept-routes.ts: the same world, one kind of route),
// a route that is the same object at the same place
// from the start or the end of the order as last time made what it made then, so the walk
// looks only at the routes between (found as the resolver finds a change, by sameEnds) and
// takes over the rest of the last walk: its table entries, statuses, warnings and the count of
// routes attached to each listener. One route changed among 10,000 then walks one route.
// A test holds the result equal to a full compile after random edit sequences.
import type { Route } from '../gatewayapi/model.js';
import { changedPart, countsAround } from '../json.js';
import type { TableRoute } from '../policy/policy-table.js';
import type { KeptRoute } from './kept-routes.js';
import type { ObjectStatusBody, ObjectWarning } from './status.js';

/** What a walk over the routes made. */
export interface RouteWalk {
  /** The routes in the order walked, and what each made. */
  readonly order: readonly Route[];
  readonly made: readonly KeptRoute[];
  /** The table entries of the attached routes, in that order. */
  readonly table: TableRoute[];
  readonly status: ReadonlyMap<Route, ObjectStatusBody>;
  readonly warnings: ReadonlyMap<Route, readonly ObjectWarning[]>;
  /** Routes attached to each listener, by its position (listenersOf). */
  readonly attached: Int32Array;
  /** Routes taken over from the last walk without being looked at. */
  readonly reused: number;
  /** The walk was taken up from the last one: every route that was in it made what it made then. */
  readonly resumed: boolean;
}

interface Walked extends RouteWalk {
  readonly status: Map<Route, ObjectStatusBody>;
  readonly warnings: Map<Route, readonly ObjectWarning[]>;
  /** How many table entries the routes before each position made (one more than routes). */
  readonly entriesBefore: Int32Array;
}

export class RouteRun {
  private last: Walked | undefined;

  /**
   * Walks `order`, `make` giving what each route makes; from the last walk when `resumable`
   * (what was kept of every route holds since it) and the listeners are as many.
   */
  walk(
    order: readonly Route[],
    listeners: number,
    resumable: boolean,
    make: (route: Route) => KeptRoute,
  ): RouteWalk {
    const last = resumable && this.last?.attached.length === listeners ? this.last : undefined;
    // A walk that does not finish (a route that fails to translate) leaves nothing to take up.
    this.last = undefined;
    const walked = last ? resume(last, order, make) : whole(order, listeners, make);
    this.last = walked;
    return walked;
  }
}

/** What one route made, added to a walk's maps and counts. */
function add(route: Route, made: KeptRoute, into: Walked): void {
  for (const at of made.attachedTo) (into.attached[at] as number)++;
  into.status.set(route, made.status);
  // Only warnings there are: a status is made the same without an empty list.
  if (made.warnings && made.warnings.length > 0) into.warnings.set(route, made.warnings);
}

function whole(order: readonly Route[], listeners: number, make: (route: Route) => KeptRoute): Walked {
  const walked: Walked = {
    order,
    made: [],
    table: [],
    status: new Map(),
    warnings: new Map(),
    attached: new Int32Array(listeners),
    reused: 0,
    resumed: false,
    entriesBefore: new Int32Array(order.length + 1),
  };
  order.forEach((route, i) => {
    const made = make(route);
    (walked.made as KeptRoute[]).push(made);
    if (made.entry) walked.table.push(made.entry);
    add(route, made, walked);
    walked.entriesBefore[i + 1] = walked.table.length;
  });
  return walked;
}

/** The last walk with the routes between its same start and end taken out and `order`'s put in. */
function resume(last: Walked, order: readonly Route[], make: (route: Route) => KeptRoute): Walked {
  const at = changedPart(last.order, order);
  const attached = Int32Array.from(last.attached);
  const { status, warnings } = last;
  for (let i = at.from; i < at.to; i++) {
    const route = last.order[i] as Route;
    for (const a of (last.made[i] as KeptRoute).attachedTo) (attached[a] as number)--;
    status.delete(route);
    warnings.delete(route);
  }
  const made: KeptRoute[] = [];
  const entries: TableRoute[] = [];
  const entriesBefore: number[] = [];
  const entriesFrom = last.entriesBefore[at.from] as number;
  const walked = { status, warnings, attached } as Walked;
  for (let i = at.from; i < at.newTo; i++) {
    const route = order[i] as Route;
    const m = make(route);
    made.push(m);
    if (m.entry) entries.push(m.entry);
    add(route, m, walked);
    entriesBefore.push(entriesFrom + entries.length);
  }
  const entriesTo = last.entriesBefore[at.to] as number;
  return {
    order,
    made: last.made.slice(0, at.from).concat(made, last.made.slice(at.to)),
    table: last.table.slice(0, entriesFrom).concat(entries, last.table.slice(entriesTo)),
    status,
    warnings,
    attached,
    reused: order.length - (at.newTo - at.from),
    resumed: true,
    entriesBefore: countsAround(last.entriesBefore, at, entriesBefore, order.length),
  };
}
