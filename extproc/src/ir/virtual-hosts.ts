// Gateway API precedence as plain ordered lists, for the Envoy configuration generator:
// one virtual host per hostname whose routes, tried in order with first match winning,
// choose exactly what the ext_proc resolver chooses (both rank by precedence.ts). A
// hostname's own matches come first, then those of the wildcards covering it (longest
// first), then those for any host.
import type { TableMatch, TableRoute, TableRule } from '../policy/policy-table.js';
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

function covers(wildcard: string, hostname: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  const h = hostname.startsWith('*.') ? hostname.slice(1) : hostname;
  return h !== suffix && h.endsWith(suffix);
}

/** The virtual hosts of routes given in table order (equal precedence goes to the earlier). */
export function virtualHosts(routes: readonly TableRoute[]): VirtualHost[] {
  const byHost = new Map<string, { entry: RankedMatch; rank: number }[]>();
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
  for (const [hostname, list] of byHost) {
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
  const wildcards = [...own.keys()].filter((h) => h.startsWith('*.')).sort((a, b) => b.length - a.length);
  const hostnames = [...own.keys()].filter((h) => h !== '*').sort();
  const out: VirtualHost[] = hostnames.map((hostname) => ({
    hostname,
    matches: [
      ...(own.get(hostname) ?? []),
      ...wildcards.filter((w) => covers(w, hostname)).flatMap((w) => own.get(w) ?? []),
      ...(own.get('*') ?? []),
    ],
  }));
  if (own.has('*')) out.push({ hostname: '*', matches: own.get('*') ?? [] });
  return out;
}
