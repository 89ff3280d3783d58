// Gateway API precedence as plain ordered lists, for the Envoy configuration generator:
// one virtual host per hostname whose routes, tried in order with first match winning,
// choose exactly what the ext_proc resolver chooses (both rank by precedence.ts). A
// hostname's own matches come first, then those of the wildcards covering it (longest
// first), then those for any host. Where the port's listeners have different hostnames, each
// virtual host keeps only the matches of routes attached to the listener that owns its hostname
// (listener-isolation.ts), and every listener hostname has a virtual host.
import type { TableMatch, TableRoute, TableRule } from '../policy/policy-table.js';
import type { Isolation } from './listener-isolation.js';
import { type RankedMatch, compareMatches, matchIndexOf, pathRank } from './precedence.js';

export interface OrderedMatch {
  readonly routeId: string;
  readonly ruleId: string;
  /** `<rule id>/match/<j>` */
  readonly matchId: string;
  /** The hostname the match was attached with (this virtual host's, a covering wildcard, or `*`). */
  readonly hostname: string;
  readonly rule: TableRule;
  readonly match: TableMatch;
}

export interface VirtualHost {
  /** `shop.example.com`, `*.example.com` or `*` (any host). */
  readonly hostname: string;
  readonly matches: readonly OrderedMatch[];
}

/** Whether `*.x` covers a hostname (an exact one, or a narrower wildcard). */
export function covers(wildcard: string, hostname: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  const h = hostname.startsWith('*.') ? hostname.slice(1) : hostname;
  return h !== suffix && h.endsWith(suffix);
}

/** The virtual hosts of routes given in table order (equal precedence goes to the earlier). */
export function virtualHosts(routes: readonly TableRoute[], isolation?: Isolation): VirtualHost[] {
  const byHost = new Map<string, { entry: RankedMatch; rank: number }[]>();
  for (const key of isolation?.keys ?? []) byHost.set(key, []);
  routes.forEach((route, order) => {
    for (const rule of route.rules) {
      for (const match of rule.matches) {
        const entry: RankedMatch = { route, rule, match, routeOrder: order, matchIndex: matchIndexOf(match) };
        for (const h of route.hostnames) {
          const list = byHost.get(h) ?? [];
          list.push({ entry, rank: pathRank(match) });
          byHost.set(h, list);
        }
      }
    }
  });
  const own = new Map<string, OrderedMatch[]>();
  for (const [hostname, all] of byHost) {
    const list = isolation ? all.filter(({ entry }) => isolation.allows(entry.route, hostname)) : all;
    list.sort((a, b) => b.rank - a.rank || compareMatches(a.entry, b.entry));
    own.set(
      hostname,
      list.map(({ entry }) => ({
        routeId: entry.route.id,
        ruleId: entry.rule.id,
        matchId: entry.match.id,
        hostname,
        rule: entry.rule,
        match: entry.match,
      })),
    );
  }
  const routeOf = new Map(routes.map((r) => [r.id, r]));
  const wildcards = [...own.keys()].filter((h) => h.startsWith('*.')).sort((a, b) => b.length - a.length);
  const hostnames = [...own.keys()].filter((h) => h !== '*').sort();
  // A covering wildcard's or any host's matches come along only for routes this hostname's listener has.
  const borrowed = (from: string, hostname: string) =>
    (own.get(from) ?? []).filter(
      (m) => !isolation || isolation.allows(routeOf.get(m.routeId) as TableRoute, hostname),
    );
  const out: VirtualHost[] = hostnames.map((hostname) => ({
    hostname,
    matches: [
      ...(own.get(hostname) ?? []),
      ...wildcards.filter((w) => covers(w, hostname)).flatMap((w) => borrowed(w, hostname)),
      ...borrowed('*', hostname),
    ],
  }));
  if (own.has('*')) out.push({ hostname: '*', matches: own.get('*') ?? [] });
  return out;
}
