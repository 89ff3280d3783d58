// What translation keeps from one compile to the next, so that a change to one route among
// 10,000 does not translate the other rules again. A rule's table entry depends on the rule
// (and its route's identity and errors, which a rule object never outlives), and on the
// context every rule reads: the Services, EndpointSlices, ReferenceGrants and policies. The
// incremental compiler hands over the same objects for what did not change, so the context is
// the same when every object but the routes is the same object, and the policies give the
// same answers (a policy can target a route, so routes that come and go can change them).
// Any other change starts over. A test holds the result equal to a full compile after
// random edit sequences.
import type { AnyObject, Route, RouteRule } from '../gatewayapi/model.js';
import type { TableRoute, TableRule } from '../table/policy-table.js';
import { sameItems } from '../json.js';

/** What was made for a route and its rules, with the rules it was made for. */
interface Outcome {
  readonly rules: readonly TableRule[];
  readonly value: unknown;
}

export class TranslateMemo {
  private context: readonly AnyObject[] = [];
  private policies = '';
  private rules = new WeakMap<RouteRule, TableRule>();
  private outcomes = new WeakMap<Route, Outcome>();
  private routes = new Map<string, TableRoute>();
  private nextRoutes = new Map<string, TableRoute>();

  /**
   * Starts a translation: what was kept holds only if every object but the routes is the same
   * object as last time, and the policies' answers (as JSON) are the same.
   */
  begin(context: readonly AnyObject[], policies: string): void {
    const same = sameItems(context, this.context) && policies === this.policies;
    if (!same) {
      this.rules = new WeakMap();
      this.outcomes = new WeakMap();
      this.routes = new Map();
    }
    this.context = context;
    this.policies = policies;
    this.nextRoutes = new Map();
  }

  end(): void {
    this.routes = this.nextRoutes;
    this.nextRoutes = new Map();
  }

  rule(rule: RouteRule, make: () => TableRule): TableRule {
    let made = this.rules.get(rule);
    if (!made) {
      made = make();
      this.rules.set(rule, made);
    }
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

  /** The route's table entry as last time when it is equal to it, so it stays the same object. */
  route(made: TableRoute): TableRoute {
    const last = this.routes.get(made.id);
    const route = last && sameRoute(last, made) ? last : made;
    this.nextRoutes.set(made.id, route);
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
