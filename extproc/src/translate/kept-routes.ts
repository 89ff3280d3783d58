// What translation made of each route, kept whole while nothing it read besides the route
// changed, so a one-route change at 10,000 routes neither attaches, settles, translates nor
// builds the status of the other 9,999 again. A route reads, besides itself: the Gateways
// (with their classes, Secrets, ConfigMaps, Namespaces, grants), the Services and slices its
// rules name, the policies' answers, and the older routes of the other kind (a hostname
// conflict between an HTTPRoute and a GRPCRoute). So what is kept holds only while every
// object but the routes is the same decoded object as last time, the policies' answers are the
// same (the policies are part of that world), and the routes are of one kind (no conflict can
// arise); otherwise every route is walked as before. What a kept route makes reachable for
// policies' status is kept with it.
// A test holds the result equal to a full compile after random edit sequences.
import type { AnyObject, Model, Route } from '../gatewayapi/model.js';
import type { TableRoute } from '../policy/policy-table.js';
import type { ListenerState } from './gateways.js';
import type { ObjectStatusBody, ObjectWarning } from './status.js';

/** What translation made of one route. */
export interface KeptRoute {
  /** Its table entry, when a usable listener serves it. */
  readonly entry: TableRoute | undefined;
  /** The listeners it attached to (each counts it in attachedRoutes), by position in `listenersOf`. */
  readonly attachedTo: readonly number[];
  readonly status: ObjectStatusBody;
  /** Its warnings, where it attached. */
  readonly warnings: readonly ObjectWarning[] | undefined;
  /** What it makes reachable for policies' status, where it attached and some policy targets. */
  readonly reached?: RouteReach;
}

/** The policy targets (`route/…`, `rule/…`, `service/…`) a route reaches from its Gateways. */
export interface RouteReach {
  readonly gateways: readonly string[];
  readonly keys: readonly string[];
}

/**
 * What every rule's translation can read besides its route and the Services and
 * EndpointSlices it names (which the memo checks rule by rule): the grants, and the policies
 * with what they read.
 */
export function contextOf(model: Model): AnyObject[] {
  return [
    ...model.referenceGrants,
    ...model.backendTlsPolicies,
    ...model.backendTrafficPolicies,
    ...model.sessionPolicies,
    ...model.namespaces,
    ...model.secrets,
    ...model.configMaps,
  ];
}

/** Every object of the model but the routes: what a route's translation may read of the world. */
function worldOf(model: Model): AnyObject[] {
  return [
    ...model.gatewayClasses,
    ...model.gateways,
    ...model.services,
    ...model.endpointSlices,
    ...contextOf(model),
  ];
}

/** Routes of both kinds: an HTTPRoute and a GRPCRoute may conflict on a hostname. */
function bothKinds(routes: readonly Route[]): boolean {
  const first = routes[0]?.kind;
  return routes.some((r) => r.kind !== first);
}

export class KeptRoutes {
  private world: readonly AnyObject[] = [];
  private answers = '';
  private kept = new WeakMap<Route, KeptRoute>();
  private usable = false;
  /** Routes the last translation kept whole. */
  keptCount = 0;
  /**
   * What was kept of every route before this translation holds in it: the last translation
   * kept routes too, and nothing was let go since (translate/route-run.ts takes its walk up).
   */
  continued = false;

  /**
   * Starts a translation: what was kept holds while the world (compared as TranslateMemo
   * compares its context: the same decoded object, or a copy that only moved in its file) and
   * the policies' answers are the same (the policies being in the world, so is whether any
   * targets something, which decides whether routes record what they reach); it is used and
   * made only where no route can read another.
   */
  begin(
    model: Model,
    answers: string,
    same: (a: readonly AnyObject[], b: readonly AnyObject[]) => boolean,
  ): void {
    const world = worldOf(model);
    const held = same(world, this.world) && answers === this.answers;
    if (!held) this.kept = new WeakMap();
    this.world = world;
    this.answers = answers;
    const wasUsable = this.usable;
    this.usable = !bothKinds(model.routes);
    if (!this.usable) this.kept = new WeakMap();
    this.continued = held && wasUsable && this.usable;
    this.keptCount = 0;
  }

  /** Counts routes kept whole without being looked up (taken over from the last walk). */
  taken(routes: number): void {
    this.keptCount += routes;
  }

  get(route: Route): KeptRoute | undefined {
    const kept = this.usable ? this.kept.get(route) : undefined;
    if (kept) this.keptCount++;
    return kept;
  }

  set(route: Route, made: KeptRoute): void {
    if (this.usable) this.kept.set(route, made);
  }
}

/** Every listener of the Gateways, in their order: the same world lists them the same way. */
export function listenersOf(
  gateways: ReadonlyMap<string, { readonly listeners: readonly ListenerState[] }>,
): ListenerState[] {
  return [...gateways.values()].flatMap((g) => g.listeners);
}
