// Builds the IR (gateway-ir.ts) from the policy table: the one place its decisions are taken.
// Gateway mode's parts (rules' actions, clusters, virtual hosts) are built on first read, so
// attach mode never pays for them; an IrMemo keeps what an unchanged rule or match made from one
// build to the next. Pure: reads only the table.
import { exact } from '../json.js';
import type { PolicyTable, TableListener, TableMatch, TableRoute } from '../policy/policy-table.js';
import { headersReadBy } from '../policy/headers-read.js';
import { matchRe2Problem } from '../policy/re2-syntax.js';
import { policyTableDigest } from '../policy/table-digest.js';
import { type IrCluster, nameRuleClusters, shareRuleClusters } from './cluster-sharing.js';
import type { GatewayIr, IrPort, IrSniChain, IrVirtualHost, ServedRoute } from './gateway-ir.js';
import { IrMemo } from './ir-memo.js';
import { portIsolation } from './listener-isolation.js';
import { type PortGroup, portGroups, servedOn } from './listener-ports.js';
import { sniChains } from './misdirected.js';
import { type IrEntry, type IrRule, ruleAction, ruleEntry } from './rule-action.js';
import { ruleClusters } from './rule-clusters.js';
import { routerPlan } from './router-plan.js';

/**
 * Every rule's action, kept in the memo by its table rule (portHosts reads it there), and the
 * clusters they name, shared, in the order rules first name them. A rule kept from the last
 * build only names its clusters again: its targets name them already.
 */
function decide(routes: readonly TableRoute[], memo: IrMemo): IrCluster[] {
  memo.names.begin();
  const clusters: IrCluster[] = [];
  for (const route of routes) {
    for (const rule of route.rules) {
      const kept = memo.rules.get(rule);
      if (kept) {
        // Names come from content, which comes from the rule: only the clusters' order is new.
        if (kept.clusters) nameRuleClusters(kept.clusters, memo.names, clusters);
        continue;
      }
      const plan = routerPlan(rule.policy);
      // A redirect (a backendRef's included) never reaches a backend: no cluster for it.
      const own =
        rule.invalid || rule.redirect ? undefined : ruleClusters(route.kind, rule, plan.backoffMs > 0);
      const shared = own ? shareRuleClusters(own, memo.names, clusters) : undefined;
      const ir = ruleAction(rule, plan, own, shared);
      // Plain literals: a literal that starts with a spread gets a map of its own (json.ts sharedShape).
      memo.rules.set(rule, own ? { clusters: own, ir } : { ir });
    }
  }
  memo.names.end();
  return clusters;
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
  let decided: IrCluster[] | undefined;
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
      return (headersRead ??= headersReadBy(table));
    },
    get digest() {
      return (digest ??= policyTableDigest(table));
    },
  };
}
