// What translation keeps from one compile to the next, so that a change to one route among
// 10,000 does not translate the other rules again, and a change to one Service translates
// only the rules that send to it. A rule's table entry depends on the rule (and its route's
// identity and errors, which a rule object never outlives); on the Services and
// EndpointSlices its backendRefs and mirrors name; and on what every rule reads: the
// ReferenceGrants, and the policies with the Secrets and ConfigMaps they check. The
// incremental compiler hands over the same objects for what did not change, so a kept rule
// holds while the Services and slices it names are the same objects (or still absent), every
// shared object is the same object, and the policies give the same answers (a policy can
// target a route, so routes that come and go can change them). A change to a shared object
// starts over. Gateways are not read by a rule (only the client certificate of those its route
// attached to, checked rule by rule): attaching a route to them is done every time. Statuses
// are kept by content: one equal to the last for its object stays that object; an object's
// status made from the same object and the same pieces (a route's: its outcome and each
// parent's Accepted) is that object again, neither made nor compared.
// A test holds the result equal to a full compile after random edit sequences.
import type { AnyObject, EndpointSlice, Model, Route, RouteRule, Service } from '../gatewayapi/model.js';
import type { TableRoute, TableRule } from '../policy/policy-table.js';
import { changedPart, sameItems, sameJson } from '../json.js';
import { type ObjectStatus, type ObjectStatusBody, type ObjectWarning, objectKey } from './status.js';
import type { Attachment } from './attach.js';
import type { BackendContext } from './backends.js';
import { KeptRoutes } from './kept-routes.js';
import { GivenStatuses } from './given-statuses.js';
import { RouteRun } from './route-run.js';
import { KeptOlderFirst } from './precedence.js';

/** What was made for a route and its rules, with the rules it was made for. */
interface Outcome {
  readonly rules: readonly TableRule[];
  readonly value: unknown;
}

/** A Service a rule names, as the rule's translation saw it. */
interface ServiceRead {
  readonly key: string;
  readonly service: Service | undefined;
  readonly slices: readonly EndpointSlice[];
}

/** A rule's table entry, with the Services it was made from. */
interface KeptRule {
  readonly made: TableRule;
  readonly read: readonly ServiceRead[];
  /** The client certificate its TLS backends present: where the route attached decides it. */
  readonly clientCertificate: string | undefined;
}

/** A route's status body, with what it was made from besides the route. */
interface KeptRouteStatus {
  /** What its rules made it say (TranslateMemo.outcome): the same object while they are. */
  readonly outcome: object;
  /** Whether it attached anywhere (then its parents carry the outcome's conditions). */
  readonly attached: boolean;
  /** Each parentRef's Accepted, in order. */
  readonly accepted: readonly Attachment['accepted'][];
  readonly body: ObjectStatusBody;
}

/** A route's table entry, with the listeners (and hostnames on each) it was made for. */
interface KeptTableRoute {
  /** Listener ids and hostnames only: the listeners' states belong to their compile. */
  readonly served: readonly ServedOn[];
  readonly rules: readonly TableRule[];
  readonly entry: TableRoute;
}

interface ServedOn {
  readonly id: string;
  readonly hostnames: readonly string[];
}

/** The same listeners (by id), with the same hostnames on each, in the same order. */
function sameServed(kept: readonly ServedOn[], served: Attachment['listeners']): boolean {
  return (
    kept.length === served.length &&
    kept.every((x, i) => x.id === served[i]?.state.id && sameItems(x.hostnames, served[i]?.hostnames ?? []))
  );
}

/** An object's status, with the body and warnings it was made with. */
interface KeptObjectStatus {
  readonly body: ObjectStatusBody;
  readonly warnings: readonly ObjectWarning[] | undefined;
  readonly status: ObjectStatus;
}

const NO_SLICES: readonly EndpointSlice[] = [];

/** The Services (`<ns>/<name>`) a rule's translation can look up: its backendRefs' and mirrors'. */
function serviceKeys(rule: RouteRule): string[] {
  const refs = [...rule.backendRefs, ...rule.filters.flatMap((f) => (f.mirror ? [f.mirror.backendRef] : []))];
  return [...new Set(refs.map((r) => `${r.namespace}/${r.name}`))];
}

function readServices(keys: readonly string[], ctx: BackendContext): ServiceRead[] {
  return keys.map((key) => ({
    key,
    service: ctx.services.get(key),
    slices: ctx.slices.get(key) ?? NO_SLICES,
  }));
}

/**
 * The same decoded object, or a copy of it that stands elsewhere in its file (an edit above it
 * moved it): the incremental compiler gives a moved object a new `origin` and the same values
 * otherwise, and nothing a rule is made of reads where an object stands.
 */
function sameDecoded(a: object | undefined, b: object | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => k === 'origin' || x[k] === y[k]);
}

function sameDecodedItems(a: readonly object[], b: readonly object[]): boolean {
  return a.length === b.length && a.every((x, i) => sameDecoded(x, b[i]));
}

function unchanged(read: readonly ServiceRead[], ctx: BackendContext): boolean {
  return read.every(
    (r) =>
      sameDecoded(ctx.services.get(r.key), r.service) &&
      sameDecodedItems(ctx.slices.get(r.key) ?? NO_SLICES, r.slices),
  );
}

export class TranslateMemo {
  /** Routes kept whole, while nothing but themselves could change what they make. */
  readonly kept = new KeptRoutes();
  /** The routes oldest first, sorted from the last order. */
  readonly order = new KeptOlderFirst<Route>();
  /** The last walk over the routes, taken up by the next (translate/route-run.ts). */
  readonly run = new RouteRun();
  private context: readonly AnyObject[] = [];
  private policies = '';
  private rules = new WeakMap<RouteRule, KeptRule>();
  /** Rules translated (not kept) by the last translation. */
  translatedRules = 0;
  private outcomes = new WeakMap<Route, Outcome>();
  /**
   * The last table's entries by id; the entries this translation made anew are put in at its
   * end. Kept from one translation to the next rather than made again: 10,000 entries set per
   * reload for the one a change makes anew.
   */
  private routes = new Map<string, TableRoute>();
  private readonly madeRoutes: TableRoute[] = [];
  /** The last table's entries, in order: what went from between its ends is let go (end). */
  private table: readonly TableRoute[] = [];
  /** The statuses given last time (given-statuses.ts). */
  private readonly given = new GivenStatuses();
  /** Kept by the route (or object) itself: they hold nothing that outlives it. */
  private readonly routeStatuses = new WeakMap<Route, KeptRouteStatus>();
  private readonly objectStatuses = new WeakMap<AnyObject, KeptObjectStatus>();
  private readonly tableRoutes = new WeakMap<Route, KeptTableRoute>();

  /**
   * Starts a translation: what was kept holds only if every shared object (`context`: neither
   * a route, a Service nor an EndpointSlice) is the same decoded object as last time (or a
   * copy that only moved in its file), and the policies' answers (as JSON) are the same.
   */
  begin(model: Model, context: readonly AnyObject[], policies: string): void {
    this.translatedRules = 0;
    this.kept.begin(model, policies, sameDecodedItems);
    const same = sameDecodedItems(context, this.context) && policies === this.policies;
    if (!same) {
      this.rules = new WeakMap();
      this.outcomes = new WeakMap();
      this.routes = new Map();
    }
    this.context = context;
    this.policies = policies;
    this.madeRoutes.length = 0;
  }

  /** Ends a translation whose table's entries are `table` (each id once). */
  end(table: readonly TableRoute[]): void {
    for (const made of this.madeRoutes) this.routes.set(made.id, made);
    this.madeRoutes.length = 0;
    // Every entry of the table is in the map: a route kept whole was in the last table with
    // its entry, and every other entry was put in just now (made, or kept by tableRoute but
    // missing). So the same size means nothing else is; else the ids that went are let go,
    // and failing that the table's entries alone are taken.
    if (this.routes.size !== table.length) this.dropGone(table);
    if (this.routes.size !== table.length) this.routes = new Map(table.map((r) => [r.id, r]));
    this.table = table;
  }

  /**
   * Lets go of the ids of the last table's entries between its same start and end as `table`'s
   * that are not between them in `table` (ids are unique in a table, and the entries before and
   * after are the same in both): a route deleted among 10,000 made a new map of the 9,999.
   */
  private dropGone(table: readonly TableRoute[]): void {
    const at = changedPart(this.table, table);
    const now = new Set<string>();
    for (let i = at.from; i < at.newTo; i++) now.add((table[i] as TableRoute).id);
    for (let i = at.from; i < at.to; i++) {
      const id = (this.table[i] as TableRoute).id;
      if (!now.has(id)) this.routes.delete(id);
    }
  }

  /**
   * The rule's table entry as `make` gives it, kept while the Services it names and the client
   * certificate of its route's Gateways are the same.
   */
  rule(
    rule: RouteRule,
    ctx: BackendContext,
    clientCertificate: string | undefined,
    make: () => TableRule,
  ): TableRule {
    const kept = this.rules.get(rule);
    if (kept && kept.clientCertificate === clientCertificate && unchanged(kept.read, ctx)) return kept.made;
    const made = make();
    this.translatedRules++;
    this.rules.set(rule, { made, read: readServices(serviceKeys(rule), ctx), clientCertificate });
    return made;
  }

  /**
   * What `make` gives for the route (the same object, where it stands in its file) and these
   * rules: kept while both are the same objects.
   */
  outcome<T>(route: Route, rules: readonly TableRule[], make: () => T): T {
    const kept = this.outcomes.get(route);
    if (kept && sameItems(kept.rules, rules)) {
      return kept.value as T;
    }
    const value = make();
    this.outcomes.set(route, { rules, value });
    return value;
  }

  /**
   * The route's status body as `make` gives it: a function of the route (its parentRefs), each
   * parent's Accepted, whether it attached, and its outcome, so it stays the same object while
   * they are the same (Accepted compared by content: attachment makes it anew every time).
   */
  routeStatus(
    route: Route,
    attachments: readonly Attachment[],
    outcome: object,
    attached: boolean,
    make: () => ObjectStatusBody,
  ): ObjectStatusBody {
    const kept = this.routeStatuses.get(route);
    if (
      kept &&
      kept.outcome === outcome &&
      kept.attached === attached &&
      kept.accepted.length === attachments.length &&
      kept.accepted.every((c, i) => sameJson(c, attachments[i]?.accepted))
    ) {
      return kept.body;
    }
    const body = make();
    this.routeStatuses.set(route, { outcome, attached, accepted: attachments.map((a) => a.accepted), body });
    return body;
  }

  /**
   * The object's status as `make` gives it from its body and warnings: the same object while
   * the object, its body and its warnings are (nothing else of it is read), so neither it nor
   * the content comparison of `statuses` walks the 10,000 that did not change.
   */
  objectStatus(
    o: AnyObject,
    body: ObjectStatusBody,
    warnings: readonly ObjectWarning[] | undefined,
    make: () => ObjectStatus,
  ): ObjectStatus {
    const kept = this.objectStatuses.get(o);
    if (kept && kept.body === body && kept.warnings === warnings) return kept.status;
    // Made anew: the last status given for its object when equal, as `statuses` would keep.
    const made = make();
    const last = this.given.lastOf(objectKey(made));
    const status = last && sameJson(last, made) ? last : made;
    this.objectStatuses.set(o, { body, warnings, status });
    return status;
  }

  /**
   * The statuses, each the object last given for its object when it is equal to it: an
   * unchanged status stays the same object, so what was made of it (its JSON and digest on the
   * way to the service, pipeline/piece-list.ts) is kept. Equality is content, so this holds
   * whatever else changed.
   */
  statuses(list: readonly ObjectStatus[]): ObjectStatus[] {
    return this.given.keep(list);
  }

  /**
   * Each object's status, `one` making it, kept as `statuses` keeps them; only the objects a
   * change can have touched are given one again when the route walk was taken up (`resumed`).
   */
  statusesOf(
    objects: readonly AnyObject[],
    resumed: boolean,
    one: (o: AnyObject) => ObjectStatus,
  ): ObjectStatus[] {
    return this.given.of(objects, resumed, one);
  }

  /**
   * The route's table entry as `make` gives it: a function of the route, the listeners that
   * serve it (with its hostnames there) and its rules, so it is not made again while they are
   * the same; else as `route` keeps it.
   */
  tableRoute(
    route: Route,
    served: Attachment['listeners'],
    rules: readonly TableRule[],
    make: (route: Route, served: Attachment['listeners'], rules: readonly TableRule[]) => TableRoute,
  ): TableRoute {
    const kept = this.tableRoutes.get(route);
    if (kept && sameItems(kept.rules, rules) && sameServed(kept.served, served)) {
      // Served again after a translation that did not serve it: its id was let go then.
      if (this.routes.get(kept.entry.id) !== kept.entry) this.madeRoutes.push(kept.entry);
      return kept.entry;
    }
    const entry = this.route(make(route, served, rules));
    this.tableRoutes.set(route, {
      served: served.map((l) => ({ id: l.state.id, hostnames: l.hostnames })),
      rules,
      entry,
    });
    return entry;
  }

  /** The route's table entry as last time when it is equal to it, so it stays the same object. */
  route(made: TableRoute): TableRoute {
    const last = this.routes.get(made.id);
    const route = last && sameRoute(last, made) ? last : made;
    if (route !== last) this.madeRoutes.push(route);
    return route;
  }
}

function sameRoute(a: TableRoute, b: TableRoute): boolean {
  return (
    a.kind === b.kind &&
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.creationTimestamp === b.creationTimestamp &&
    sameItems(a.listeners, b.listeners) &&
    sameItems(a.hostnames, b.hostnames) &&
    sameItems(a.rules, b.rules) &&
    'creationTimestamp' in a === 'creationTimestamp' in b
  );
}
