// "If a Route (A) of type HTTPRoute or GRPCRoute is attached to a Listener and that listener
// already has another Route (B) of the other type attached and the intersection of the
// hostnames of A and B is non-empty, then the implementation MUST accept exactly one of
// these two routes" — the older one. Routes arrive here oldest first.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import type { Route } from '../gatewayapi/model.js';
import type { Attachment } from './attach.js';
import { hostnameWithin } from './hostnames.js';
import { condition } from './status.js';

/** The hostnames one route kind holds on one listener, indexed so a check is not a scan. */
class Claimed {
  private any: string | undefined;
  private readonly exact = new Map<string, string>();
  /** Keyed by the suffix after `*`, e.g. `.example.com`. */
  private readonly wildcard = new Map<string, string>();

  add(hostname: string, route: string): void {
    if (hostname === '*') this.any ??= route;
    else if (hostname.startsWith('*.')) {
      if (!this.wildcard.has(hostname.slice(1))) this.wildcard.set(hostname.slice(1), route);
    } else if (!this.exact.has(hostname)) this.exact.set(hostname, route);
  }

  /** A claimed hostname that intersects `hostname`, with the route that claimed it. */
  clash(hostname: string): { hostname: string; route: string } | undefined {
    if (this.any !== undefined) return { hostname: '*', route: this.any };
    if (hostname === '*') {
      const first = this.exact.entries().next().value ?? this.wildcard.entries().next().value;
      if (!first) return undefined;
      const [h, route] = first;
      return { hostname: this.exact.has(h) ? h : `*${h}`, route };
    }
    const exact = this.exact.get(hostname);
    if (exact !== undefined) return { hostname, route: exact };
    // Claimed wildcards covering the hostname: try each of its suffixes.
    const h = hostname.startsWith('*.') ? hostname.slice(1) : hostname;
    for (let dot = h.indexOf('.'); dot !== -1; dot = h.indexOf('.', dot + 1)) {
      const route = this.wildcard.get(h.slice(dot));
      if (route !== undefined) return { hostname: `*${h.slice(dot)}`, route };
    }
    if (!hostname.startsWith('*.')) return undefined;
    // A wildcard also intersects every narrower hostname it covers.
    for (const [e, route] of this.exact) if (hostnameWithin(e, hostname)) return { hostname: e, route };
    for (const [w, route] of this.wildcard)
      if (hostnameWithin(`*${w}`, hostname)) return { hostname: `*${w}`, route };
    return undefined;
  }
}

export class KindConflicts {
  /** Per listener id and route kind. */
  private readonly claims = new Map<string, Claimed>();

  private claimed(listener: string, kind: Route['kind']): Claimed {
    const key = `${listener}|${kind}`;
    let c = this.claims.get(key);
    if (!c) {
      c = new Claimed();
      this.claims.set(key, c);
    }
    return c;
  }

  /** Drops listeners where a route of the other kind already serves an overlapping hostname. */
  settle(route: Route, attachments: readonly Attachment[]): Attachment[] {
    const other: Route['kind'] = route.kind === 'HTTPRoute' ? 'GRPCRoute' : 'HTTPRoute';
    const name = `${route.namespace}/${route.name}`;
    return attachments.map((a) => {
      if (a.listeners.length === 0) return a;
      let clash: { hostname: string; route: string } | undefined;
      const kept = a.listeners.filter((l) => {
        const theirs = this.claims.get(`${l.state.id}|${other}`);
        const found = theirs
          ? l.hostnames.map((h) => theirs.clash(h)).find((c) => c !== undefined)
          : undefined;
        clash ??= found;
        return !found;
      });
      for (const l of kept) {
        const mine = this.claimed(l.state.id, route.kind);
        for (const h of l.hostnames) mine.add(h, name);
      }
      if (kept.length > 0 || !clash) return { ...a, listeners: kept };
      return {
        ...a,
        listeners: [],
        accepted: condition(
          T.Accepted,
          'False',
          Reason.NotAllowedByListeners,
          `the older ${other} ${clash.route} already serves hostname ${clash.hostname} on this listener; an HTTPRoute and a GRPCRoute may not share a hostname on a listener`,
          route.generation,
        ),
      };
    });
  }
}
