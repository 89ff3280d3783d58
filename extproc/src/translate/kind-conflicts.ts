// "If a Route (A) of type HTTPRoute or GRPCRoute is attached to a Listener and that listener
// already has another Route (B) of the other type attached and the intersection of the
// hostnames of A and B is non-empty, then the implementation MUST accept exactly one of
// these two routes" — the older one. Routes arrive here oldest first.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Route } from '../gatewayapi/model.js';
import type { Attachment } from './attach.js';
import { hostnameWithin } from './hostnames.js';
import { condition } from './status.js';

function intersects(a: string, b: string): boolean {
  return a === '*' || b === '*' || hostnameWithin(a, b) || hostnameWithin(b, a);
}

export class KindConflicts {
  /** Per listener id: hostnames claimed by each route kind, with the claiming route. */
  private readonly claims = new Map<string, { kind: Route['kind']; hostname: string; route: string }[]>();

  /** Drops listeners where a route of the other kind already serves an overlapping hostname. */
  settle(route: Route, attachments: readonly Attachment[]): Attachment[] {
    return attachments.map((a) => {
      if (a.listeners.length === 0) return a;
      let clash: { kind: string; route: string; hostname: string } | undefined;
      const kept = a.listeners.filter((l) => {
        const claims = this.claims.get(l.state.id) ?? [];
        const other = claims.find(
          (c) => c.kind !== route.kind && l.hostnames.some((h) => intersects(h, c.hostname)),
        );
        if (other) clash ??= other;
        return !other;
      });
      for (const l of kept) {
        const claims = this.claims.get(l.state.id) ?? [];
        for (const hostname of l.hostnames)
          claims.push({ kind: route.kind, hostname, route: `${route.namespace}/${route.name}` });
        this.claims.set(l.state.id, claims);
      }
      if (kept.length > 0 || !clash) return { ...a, listeners: kept };
      return {
        ...a,
        listeners: [],
        accepted: condition(
          T.Accepted,
          'False',
          Reason.NotAllowedByListeners,
          `the older ${clash.kind} ${clash.route} already serves hostname ${clash.hostname} on this listener; an HTTPRoute and a GRPCRoute may not share a hostname on a listener`,
          route.generation,
        ),
      };
    });
  }
}
