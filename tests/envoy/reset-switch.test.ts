// A route configuration most of whose routes want the idempotent methods' `reset` filter
// switches it on once and the others off (http-filters.ts resetSwitch), instead of each route
// switching it on. Every route must run the filter exactly where it would with each route
// saying it alone (envoyRoutes without resetDefault), whichever way the balance tips, on an
// HTTP port and on an HTTPS port's SNI chains (misdirected hosts answer 421 and never run it);
// the bridge form (every route saying its switch) under either switch of its route
// configuration; a generation after another keeps its switch near the balance
// (reset-default.ts); and a memoized generation must equal a fresh one when the balance tips
// between two.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENT_RESET_FILTER_NAME } from '../../extproc/src/envoy/envoy-names.js';
import { generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { GenerationMemo } from '../../extproc/src/envoy/generation-memo.js';
import { startingFrom } from '../../extproc/src/envoy/reset-default.js';
import { envoyRoutes } from '../../extproc/src/envoy/route-action.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import type { GatewayIr } from '../../extproc/src/ir/gateway-ir.js';
import type { Json } from '../../extproc/src/json.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import type { PolicyTable, TableListener } from '../../extproc/src/policy/policy-table.js';

const INPUT = join(dirname(fileURLToPath(import.meta.url)), 'testdata', 'reset-switch.in.yaml');
const OPTIONS = { wasmPath: 'x.wasm', sessionKeys: [] };

/** Whether a route runs the filter: its own switch, else its route configuration's (off by default). */
function runs(route: Json, rc: Json): boolean {
  const own = ((route['typed_per_filter_config'] as Json | undefined) ?? {})[IDEMPOTENT_RESET_FILTER_NAME] as
    Json | undefined;
  if (own) return own['disabled'] !== true;
  return IDEMPOTENT_RESET_FILTER_NAME in ((rc['typed_per_filter_config'] as Json | undefined) ?? {});
}

/** Each route's name and whether it runs the filter, by route configuration (under `head`'s switch when given). */
function switches(routeConfigurations: readonly Json[], head?: Json): Map<string, [string, boolean][]> {
  return new Map(
    routeConfigurations.map((rc) => [
      rc['name'] as string,
      (rc['virtual_hosts'] as Json[]).flatMap((h) =>
        (h['routes'] as Json[]).map((r): [string, boolean] => [String(r['name']), runs(r, head ?? rc)]),
      ),
    ]),
  );
}

function generated(ir: GatewayIr): Map<string, [string, boolean][]> {
  return switches(generateGatewayResources(ir, OPTIONS).routeConfigurations);
}

/** Whether each route configuration switches the filter on for all. */
function heads(routeConfigurations: readonly Json[]): boolean[] {
  return routeConfigurations.map((rc) => rc['typed_per_filter_config'] !== undefined);
}

/** The same, with each route switching the filter on alone (the form before the switch moved). */
function routeByRoute(ir: GatewayIr): Map<string, [string, boolean][]> {
  const out = new Map<string, [string, boolean][]>();
  for (const port of ir.ports) {
    const listener = { port: port.port, https: port.protocol === 'HTTPS' };
    for (const c of port.sniChains ?? [{ name: port.name, virtualHosts: port.virtualHosts }]) {
      out.set(
        c.name,
        c.virtualHosts.flatMap((h) =>
          h.misdirected
            ? [['undefined', false] as [string, boolean]]
            : h.entries
                .flatMap((e) => envoyRoutes(e, { listener }))
                .map((r): [string, boolean] => [String(r['name']), runs(r, {})]),
        ),
      );
    }
  }
  return out;
}

/** The input's table, with `plain` rules without retries added to tip the balance. */
function table(plain: number): PolicyTable {
  const rules = Array.from(
    { length: plain },
    (_, i) =>
      `    - matches: [{ path: { value: /plain-${i} } }]\n      backendRefs: [{ name: web, port: 80 }]`,
  );
  const extra = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: plain }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [shop.example.com]
  rules:
${rules.join('\n')}
`;
  const text = readFileSync(INPUT, 'utf8') + (plain > 0 ? extra : '');
  return compileSnapshot([{ path: 'reset-switch.in.yaml', text }]).table;
}

/** The table on an HTTPS port whose two listeners have hostnames: SNI chains, misdirected hosts. */
function onSniChains(t: PolicyTable): PolicyTable {
  const [first] = t.listeners as [TableListener];
  const https = (name: string, hostname: string): TableListener => ({
    ...first,
    id: `${first.id}-${name}`,
    name,
    protocol: 'HTTPS',
    hostname,
    tls: { certificates: ['secret/default/cert'] },
  });
  const listeners = [https('shop', 'shop.example.com'), https('other', 'other.example.com')];
  const routes = t.routes.map((r) => ({ ...r, listeners: listeners.map((l) => l.id) }));
  return { ...t, listeners, routes };
}

describe('the reset filter switched on once per route configuration', () => {
  for (const plain of [0, 4, 12]) {
    for (const [form, of] of [
      ['an HTTP port', (t: PolicyTable) => t],
      ['an HTTPS port with SNI chains', onSniChains],
    ] as const) {
      it(`${form}, ${plain} more rules without retries: every route runs it where it would alone`, () => {
        const ir = buildIr(of(table(plain)));
        const got = generated(ir);
        expect([...got.values()].flat().length).toBeGreaterThan(8);
        expect(got).toEqual(routeByRoute(ir));
      });
    }
  }

  it('the bridge form: every route says its switch, right under either switch of its route configuration', () => {
    for (const of of [(t: PolicyTable) => t, onSniChains]) {
      for (const plain of [0, 12]) {
        const ir = buildIr(of(table(plain)));
        const resources = generateGatewayResources(ir, OPTIONS);
        const names = new Set(resources.routeConfigurations.map((rc) => rc['name'] as string));
        const explicit = resources.explicitRouteConfigurations?.(names) ?? [];
        expect(explicit.map((rc) => rc['name'])).toEqual([...names]);
        expect(explicit.length).toBeGreaterThan(0);
        for (const rc of explicit)
          for (const h of rc['virtual_hosts'] as Json[])
            for (const r of h['routes'] as Json[])
              expect(Object.keys((r['typed_per_filter_config'] as Json | undefined) ?? {})).toContain(
                IDEMPOTENT_RESET_FILTER_NAME,
              );
        const on = { typed_per_filter_config: { [IDEMPOTENT_RESET_FILTER_NAME]: {} } };
        expect(switches(explicit, on)).toEqual(routeByRoute(ir));
        expect(switches(explicit, {})).toEqual(routeByRoute(ir));
      }
    }
  });

  it('a generation after another keeps its switch until the other way leads by more than a tenth', () => {
    const memo = new GenerationMemo(OPTIONS);
    // Routes wanting it less those that do not: +3 of 9, -1 of 13 (margin 1), -9 of 21 (margin 2), -1, +3.
    const steps = [0, 4, 12, 4, 0].map((plain) => {
      const ir = buildIr(table(plain));
      const { routeConfigurations } = generateGatewayResources(ir, OPTIONS, undefined, undefined, memo);
      expect(switches(routeConfigurations)).toEqual(routeByRoute(ir));
      return heads(routeConfigurations)[0];
    });
    expect(steps).toEqual([true, true, false, false, true]);
    // Without a generation before, most routes decide.
    expect(heads(generateGatewayResources(buildIr(table(4)), OPTIONS).routeConfigurations)).toEqual([false]);
  });

  it('on once when most routes want it, on each route otherwise', () => {
    const configurationSwitch = (plain: number) =>
      generateGatewayResources(buildIr(table(plain)), OPTIONS).routeConfigurations.map(
        (rc) => rc['typed_per_filter_config'] !== undefined,
      );
    expect(configurationSwitch(0)).toEqual([true]);
    expect(configurationSwitch(12)).toEqual([false]);
  });

  it('a memoized generation equals a fresh one (from the same switches) as the balance tips one way and back', () => {
    for (const of of [(t: PolicyTable) => t, onSniChains]) {
      const memo = new GenerationMemo(OPTIONS);
      for (const plain of [0, 12, 0, 4, 12, 0]) {
        const ir = buildIr(of(table(plain)));
        const fresh = startingFrom(memo, new GenerationMemo(OPTIONS));
        const got = generateGatewayResources(ir, OPTIONS, undefined, undefined, memo).routeConfigurations;
        expect(switches(got)).toEqual(routeByRoute(ir));
        expect(got).toEqual(
          generateGatewayResources(ir, OPTIONS, undefined, undefined, fresh).routeConfigurations,
        );
      }
    }
  });
});
