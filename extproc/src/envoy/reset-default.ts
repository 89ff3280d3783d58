// Where a route configuration leaves the idempotent methods' `reset` filter (http-filters.ts
// resetSwitch): on once when most of its routes want it, so that only the others say their
// switch (Envoy unpacks every route's FilterConfig on each rebuild: docs/fleet.md). Its switch
// changes only when the other way is ahead by more than a tenth of the routes, since a change
// of it changes the routes of one side, and over VHDS costs every host twice (xds/ads-server.ts
// sends the hosts saying their own switch first): a table near the balance keeps its switch.
import type { IrVirtualHost } from '../ir/gateway-ir.js';
import type { GenerationMemo } from './generation-memo.js';

/** Routes that want the filter less those that do not (by IR entry; a misdirected host's 421 does not), and their number. */
export function resetBalance(virtualHosts: readonly IrVirtualHost[]): { balance: number; routes: number } {
  let balance = 0;
  let routes = 0;
  for (const h of virtualHosts) {
    if (h.misdirected) {
      balance--;
      routes++;
      continue;
    }
    for (const e of h.entries) balance += e.route.resetByMethod ? 1 : -1;
    routes += h.entries.length;
  }
  return { balance, routes };
}

/**
 * Whether a route configuration switches the filter on for all, given its balance and its switch
 * in the generation before (undefined: none, or not known). With none, most routes decide; after
 * one, the switch changes only when the other way leads by more than ⌊routes / 10⌋.
 */
export function resetOnForAll(balance: number, routes: number, before: boolean | undefined): boolean {
  if (before === undefined) return balance > 0;
  const margin = Math.floor(routes / 10);
  return before ? balance >= -margin : balance > margin;
}

/** Each route configuration's switch in the last generation made with a memo (kept with it, for the next). */
const lastSwitches = new WeakMap<GenerationMemo, ReadonlyMap<string, boolean>>();

/** The switches of one generation, decided against the last one made with the same memo. */
export class ResetDefaults {
  private readonly before: ReadonlyMap<string, boolean> | undefined;
  private readonly now = new Map<string, boolean>();

  constructor(private readonly memo: GenerationMemo | undefined) {
    this.before = memo ? lastSwitches.get(memo) : undefined;
  }

  /** Whether route configuration `name`, of these hosts, switches the filter on for all. */
  onForAll(name: string, virtualHosts: readonly IrVirtualHost[]): boolean {
    const { balance, routes } = resetBalance(virtualHosts);
    const on = resetOnForAll(balance, routes, this.before?.get(name));
    this.now.set(name, on);
    return on;
  }

  /** The generation is made: its switches are what the next one starts from. */
  end(): void {
    if (this.memo) lastSwitches.set(this.memo, this.now);
  }
}

/**
 * `to` (a memo that kept nothing yet), its first generation starting from the switches `from`'s
 * last one decided: a fresh generation that decides as `from`'s next one will (tests compare them).
 */
export function startingFrom(from: GenerationMemo, to: GenerationMemo): GenerationMemo {
  const switches = lastSwitches.get(from);
  if (switches) lastSwitches.set(to, switches);
  return to;
}
