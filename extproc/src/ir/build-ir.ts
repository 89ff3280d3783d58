// Builds the IR (gateway-ir.ts) from the policy table: the one place its decisions are taken.
// Gateway mode's parts (rules' actions, clusters, virtual hosts) are built on first read, so
// attach mode never pays for them; an IrMemo keeps what an unchanged rule or match made from one
// build to the next. Pure: reads only the table.
import { exact, sameEnds } from '../json.js';
import type {
  PolicyTable,
  TableListener,
  TableMatch,
  TableRoute,
  TableRule,
} from '../policy/policy-table.js';
import { matchRe2Problem } from '../policy/re2-syntax.js';
import { policyTableDigest } from '../policy/table-digest.js';
import {
  type DecidedClusters,
  type IrCluster,
  type NamingClusters,
  nameRuleClusters,
  shareRuleClusters,
} from './cluster-sharing.js';
import type { GatewayIr, IrPort, IrSniChain, IrVirtualHost, ServedRoute } from './gateway-ir.js';
import { IrMemo } from './ir-memo.js';
import { portIsolation } from './listener-isolation.js';
import { type PortGroup, portGroups, servedOn } from './listener-ports.js';
import { sniChains } from './misdirected.js';
import { type IrEntry, type IrRule, ruleAction, ruleEntry } from './rule-action.js';
import { type RuleClusters, ruleClusters } from './rule-clusters.js';
import { type RouterPlan, routerPlan } from './router-plan.js';

/** A rule's own clusters: none for a rule that fails closed or a redirect (a backendRef's included never reached). */
function ownClusters(route: TableRoute, rule: TableRule, plan: RouterPlan): RuleClusters | undefined {
  return rule.invalid || rule.redirect ? undefined : ruleClusters(route.kind, rule, plan.backoffMs > 0);
}

/** Keeps a rule's decision in the memo (portHosts reads it there). */
function keepRule(memo: IrMemo, rule: TableRule, own: RuleClusters | undefined, ir: IrRule): void {
  // Plain literals: a literal that starts with a spread gets a map of its own (json.ts sharedShape).
  memo.rules.set(rule, own ? { clusters: own, ir } : { ir });
}

/**
 * Every rule's action, kept in the memo by its table rule, and the clusters they name, shared,
 * in the order rules first name them: the last build's, when the rules a change brought and
 * took name only clusters the routes before it named (decideBetween); else all of them.
 */
function decide(routes: readonly TableRoute[], memo: IrMemo): readonly IrCluster[] {
  const last = memo.decided;
  return (last && decideBetween(routes, last, memo)) ?? decideAll(routes, memo);
}

/** Every rule: a rule kept from the last build only names its clusters again (its targets name them already). */
function decideAll(routes: readonly TableRoute[], memo: IrMemo): IrCluster[] {
  memo.names.begin();
  const clusters: IrCluster[] = [];
  const keys: string[] = [];
  const firstAt: number[] = [];
  routes.forEach((route, at) => {
    for (const rule of route.rules) {
      const kept = memo.rules.get(rule);
      if (kept) {
        // Names come from content, which comes from the rule: only the clusters' order is new.
        if (kept.clusters) nameRuleClusters(kept.clusters, memo.names, clusters, keys);
        continue;
      }
      const plan = routerPlan(rule.policy);
      const own = ownClusters(route, rule, plan);
      const shared = own ? shareRuleClusters(own, memo.names, clusters, keys) : undefined;
      keepRule(memo, rule, own, ruleAction(rule, plan, own, shared));
    }
    while (firstAt.length < clusters.length) firstAt.push(at);
  });
  memo.names.end();
  memo.decided = { routes, clusters, firstAt, position: new Map(keys.map((k, i) => [k, i])) };
  return clusters;
}

/**
 * The last build's clusters, when the routes between the same start and end of the two route
 * lists (json.ts sameEnds), before and now, name only clusters a route of that start names: then
 * no cluster comes, goes or moves, and each is the object that start's first naming gives (a
 * full build names each by its first naming too), so only the rules between are decided.
 * Undefined otherwise (decideAll).
 */
function decideBetween(
  routes: readonly TableRoute[],
  last: DecidedClusters,
  memo: IrMemo,
): readonly IrCluster[] | undefined {
  const { start, end } = sameEnds(last.routes, routes);
  const atStart = (key: string): IrCluster | undefined => {
    const at = last.position.get(key);
    return at !== undefined && (last.firstAt[at] as number) < start ? last.clusters[at] : undefined;
  };
  for (let i = start; i < last.routes.length - end; i++)
    for (const rule of (last.routes[i] as TableRoute).rules)
      if (memo.rules.get(rule)?.clusters?.clusters.some((c) => !atStart(c.key))) return undefined;
  // The start's names, read alone: the memo's names stay the last build's, which they are.
  const names: NamingClusters = {
    cluster: (_content, key) => ({ cluster: atStart(key) as IrCluster, first: false }),
  };
  for (let i = start; i < routes.length - end; i++) {
    const route = routes[i] as TableRoute;
    for (const rule of route.rules) {
      const kept = memo.rules.get(rule);
      if (kept) {
        if (kept.clusters?.clusters.some((c) => !atStart(c.key))) return undefined;
        continue;
      }
      const plan = routerPlan(rule.policy);
      const own = ownClusters(route, rule, plan);
      if (own?.clusters.some((c) => !atStart(c.key))) return undefined;
      keepRule(memo, rule, own, ruleAction(rule, plan, own, own && shareRuleClusters(own, names, [])));
    }
  }
  // No cluster was first named between: those first named after it move with the end.
  const shift = routes.length - last.routes.length;
  const firstAt = last.firstAt.map((at) => (at < start ? at : at + shift));
  memo.decided = { routes, clusters: last.clusters, firstAt, position: last.position };
  return last.clusters;
}

function entryOf(rule: IrRule, match: TableMatch, memo: IrMemo): IrEntry {
  const kept = memo.entries.get(match);
  if (kept && kept.rule === rule) return kept;
  const entry = ruleEntry(rule, match);
  memo.entries.set(match, entry);
  return entry;
}

/** A port's virtual hosts, without the matches RE2 would refuse (Envoy would refuse them all). */
function portHosts(
  routes: readonly ServedRoute[],
  group: PortGroup,
  name: string,
  memo: IrMemo,
): { virtualHosts: IrVirtualHost[]; sniChains: IrSniChain[] | undefined; warnings: string[] } {
  const isolation = portIsolation(group.listeners);
  const kept = memo.ports.hosts(name, group.listeners, routes, isolation, (vh) => {
    const entries: IrEntry[] = [];
    const warnings: string[] = [];
    for (const m of vh.matches) {
      const problem = matchRe2Problem(m.match);
      // Every rule of the table was decided (decideOnce) before its hosts are made.
      const rule = memo.rules.get(m.rule)?.ir;
      if (problem !== undefined) warnings.push(`${problem}; the match is left out of Envoy's routes`);
      else if (rule) entries.push(entryOf(rule, m.match, memo));
    }
    const host = {
      hostname: vh.hostname,
      entries: exact(entries),
      countsAttempts: entries.some((e) => e.rule.countsAttempts),
    };
    return { host, warnings };
  });
  // Loops, not map and flatMap: 10,000 hosts per generation, nearly all without warnings.
  const hosts: IrVirtualHost[] = [];
  const warnings = new Set<string>();
  for (const k of kept) {
    hosts.push(k.host);
    for (const w of k.warnings) warnings.add(w);
  }
  const chains = isolation && group.protocol === 'HTTPS' ? sniChains(name, hosts, isolation) : undefined;
  return { virtualHosts: hosts, sniChains: chains, warnings: [...warnings] };
}

export function buildIr(table: PolicyTable, memo: IrMemo = new IrMemo()): GatewayIr {
  const warnings: string[] = [];
  for (const l of table.listeners) {
    if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') {
      warnings.push(
        `${l.id}: protocol ${l.protocol} is not served in gateway mode (HTTP and HTTPS listeners only)`,
      );
    }
  }
  let decided: readonly IrCluster[] | undefined;
  const decideOnce = () => (decided ??= decide(table.routes, memo));
  const ports = portGroups(table, (w) => warnings.push(w)).map((group): IrPort => {
    const routes: ServedRoute[] = [];
    table.routes.forEach((route, order) => {
      const served = servedOn(route, group);
      if (served.hostnames.length > 0) routes.push({ route: served, order });
    });
    const name =
      group.listeners.length === 1 ? (group.listeners[0] as TableListener).id : `port/${group.port}`;
    let hosts: ReturnType<typeof portHosts> | undefined;
    const hostsOnce = () => {
      decideOnce();
      return (hosts ??= portHosts(routes, group, name, memo));
    };
    return {
      port: group.port,
      protocol: group.protocol,
      name,
      listeners: group.listeners,
      routes,
      get virtualHosts() {
        return hostsOnce().virtualHosts;
      },
      get sniChains() {
        return hostsOnce().sniChains;
      },
      get warnings() {
        return hostsOnce().warnings;
      },
    };
  });
  memo.ports.keepOnly(new Set(ports.map((p) => p.name)));
  let headersRead: readonly string[] | undefined;
  let digest: string | undefined;
  return {
    listeners: table.listeners,
    routes: table.routes,
    ports,
    get clusters() {
      return decideOnce();
    },
    warnings,
    get headersRead() {
      return (headersRead ??= memo.headers.read(table.routes));
    },
    get digest() {
      return (digest ??= policyTableDigest(table));
    },
  };
}
