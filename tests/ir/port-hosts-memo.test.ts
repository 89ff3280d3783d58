// The virtual hosts an IrMemo keeps from one build to the next (ir/port-hosts-memo.ts) equal a
// fresh build's, through random sequences of one-route changes (a route replaced, removed,
// added, two swapped) on a port whose listeners have different hostnames (isolation) and on
// one whose listener has none: exact hostnames, covering wildcards and `*` all change; and with
// exact route hostnames only, where a change looks at the hostnames it touched alone.
import { describe, expect, it } from 'vitest';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import { IrMemo } from '../../extproc/src/ir/ir-memo.js';
import type { PolicyTable, TableListener, TableRoute } from '../../extproc/src/policy/policy-table.js';
import { HOSTS, pick, randomRules, rng } from '../resolve/random-table.js';
import { route } from '../resolve/table-builder.js';

const SEGMENTS = ['', 'a', 'b', 'a/b'];

function listenersOf(hostnames: readonly string[]): TableListener[] {
  return hostnames.map((h, i) => ({
    id: `gateway/default/gw/listener/l${i}`,
    gateway: 'default/gw',
    name: `l${i}`,
    port: 80,
    protocol: 'HTTP',
    ...(h === '*' ? {} : { hostname: h }),
  }));
}

function takes(listener: string, hostname: string): boolean {
  if (listener === '*' || listener === hostname) return true;
  return listener.startsWith('*.') && hostname !== '*' && hostname.endsWith(listener.slice(1));
}

/** Route `r<n>`, attached to the listeners that take one of its hostnames (or undefined: none do). */
function randomRoute(
  rand: () => number,
  n: number,
  listeners: readonly TableListener[],
  pool: readonly string[],
): TableRoute | undefined {
  const rules = randomRules(rand, { segments: SEGMENTS, maxMatches: 2 });
  const hostnames = [...new Set([pick(rand, pool), pick(rand, pool)])];
  const on = listeners.filter((l) => rand() < 0.7 && hostnames.some((h) => takes(l.hostname ?? '*', h)));
  if (on.length === 0) return undefined;
  const served = hostnames.filter((h) => on.some((l) => takes(l.hostname ?? '*', h)));
  return { ...route({ name: `r${n}`, hostnames: served, rules }), listeners: on.map((l) => l.id) };
}

/** The table with one route replaced, removed, added, or two swapped; the others stay the same objects. */
function changed(rand: () => number, routes: TableRoute[], next: () => TableRoute | undefined): TableRoute[] {
  const out = [...routes];
  const at = Math.floor(rand() * out.length);
  const made = next();
  const choice = Math.floor(rand() * 4);
  if (choice === 0 && made && out.length > 0) out[at] = made;
  else if (choice === 1 && out.length > 0) out.splice(at, 1);
  else if (choice === 2 && out.length > 1) [out[0], out[at]] = [out[at] as TableRoute, out[0] as TableRoute];
  else if (made) out.splice(at, 0, made);
  return out;
}

const view = (t: PolicyTable, memo?: IrMemo) =>
  buildIr(t, memo).ports.map((p) => ({ vh: p.virtualHosts, chains: p.sniChains, warnings: p.warnings }));

describe('IrMemo virtual hosts', () => {
  // Exact hostnames alone: a change touches no wildcard, so only its own hostnames are looked at.
  const EXACT = ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'e.example.com'];
  for (const [what, hostnames, pool] of [
    ['listeners of different hostnames', ['*', '*.example.com', 'a.example.com', '*.x.example.com'], HOSTS],
    ['one listener without a hostname', ['*'], HOSTS],
    ['exact route hostnames only', ['*', 'a.example.com'], EXACT],
  ] as const) {
    it(`equal a fresh build through random one-route changes (${what})`, () => {
      const rand = rng(hostnames.length);
      let n = 0;
      const listeners = listenersOf(hostnames);
      const next = () => randomRoute(rand, n++, listeners, pool);
      let routes = Array.from({ length: 12 }, next).filter((r) => r !== undefined);
      const memo = new IrMemo();
      // Virtual hosts that are the same object as the last build's: kept, not built again.
      let kept = 0;
      let last = new Set<object>();
      for (let step = 0; step < 300; step++) {
        // The listeners come anew with every table, as they do across the compiler thread.
        const t: PolicyTable = { version: 1, listeners: structuredClone(listeners), routes };
        const mine = view(t, memo);
        expect(mine, `step ${step}`).toEqual(view(t));
        const hosts = mine.flatMap((p) => p.vh);
        kept += hosts.filter((h) => last.has(h)).length;
        last = new Set(hosts);
        routes = changed(rand, routes, next);
      }
      expect(kept).toBeGreaterThan(0);
    });
  }
});
