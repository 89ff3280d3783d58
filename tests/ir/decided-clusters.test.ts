// The clusters an IrMemo keeps from one build to the next (ir/build-ir.ts decide: the last
// build's list, when a change names only clusters the routes before it name) equal a fresh
// build's, in order, through random sequences of changes: routes replaced, removed, added and
// swapped, sending to one to three of five Services, some with two backends and weights, some
// failing closed, and a Service's endpoints changing (every route sending to it anew, as the
// compiler gives them). So do the rules' actions the virtual hosts carry (their targets' names).
import { describe, expect, it } from 'vitest';
import { buildIr } from '../../extproc/src/ir/build-ir.js';
import { IrMemo } from '../../extproc/src/ir/ir-memo.js';
import type {
  PolicyTable,
  TableBackend,
  TableListener,
  TableRoute,
} from '../../extproc/src/policy/policy-table.js';
import { pick, rng } from '../resolve/random-table.js';
import { route } from '../resolve/table-builder.js';

const SERVICES = ['a', 'b', 'c', 'd', 'e'];
const LISTENER: TableListener = {
  id: 'gateway/default/gw/listener/http',
  gateway: 'default/gw',
  name: 'http',
  port: 80,
  protocol: 'HTTP',
};

/** Each Service's endpoints now (an EndpointSlice change moves one). */
type Endpoints = Map<string, number>;

function backend(service: string, endpoints: Endpoints, weight: number): TableBackend {
  const last = endpoints.get(service) ?? 2;
  return {
    id: `default/${service}:80`,
    namespace: 'default',
    service,
    port: 80,
    weight,
    protocol: 'http1',
    endpoints: [{ address: `127.0.1.${last}`, port: 8080, type: 'ipv4', ready: true }],
  };
}

/** Route `r<n>` for host h<n>.example, its rules sending to random Services. */
function randomRoute(rand: () => number, n: number, endpoints: Endpoints): TableRoute {
  const base = route({
    name: `r${n}`,
    hostnames: [`h${n % 7}.example`],
    rules: [[{}], [{ path: { type: 'PathPrefix', value: `/x${n}` } as const }]].slice(
      0,
      1 + Math.floor(rand() * 2),
    ),
  });
  const rules = base.rules.map((rule) => {
    const services = [...new Set([pick(rand, SERVICES), pick(rand, SERVICES)])].slice(
      0,
      1 + Math.floor(rand() * 2),
    );
    const backends = services.map((s, i) => backend(s, endpoints, i === 0 ? 3 : 1));
    return {
      ...rule,
      backends,
      ...(rand() < 0.1 ? { invalid: { reason: 'BackendNotFound', message: 'gone' } } : {}),
    };
  });
  return { ...base, rules, listeners: [LISTENER.id] };
}

/** What the IR says of its clusters and the rules' targets. */
function view(t: PolicyTable, memo?: IrMemo): unknown {
  const ir = buildIr(t, memo);
  return { clusters: ir.clusters, hosts: ir.ports.map((p) => p.virtualHosts) };
}

describe('IrMemo clusters', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`equal a fresh build through random changes (seed ${seed})`, () => {
      const rand = rng(seed);
      const endpoints: Endpoints = new Map();
      let n = 0;
      let routes = Array.from({ length: 10 }, () => randomRoute(rand, n++, endpoints));
      const memo = new IrMemo();
      let last: unknown;
      let kept = 0;
      const steps: string[] = [];
      for (let step = 0; step < 300; step++) {
        const t: PolicyTable = { version: 1, listeners: [LISTENER], routes };
        const clusters = buildIr(t, memo).clusters;
        expect(view(t, memo), steps.join('; ')).toEqual(view(t));
        // The same list as the last build's: kept, not decided again.
        if (clusters === last) kept++;
        last = clusters;
        const at = Math.floor(rand() * routes.length);
        const choice = Math.floor(rand() * 6);
        const next = [...routes];
        if (choice === 0 && next.length > 1) {
          next.splice(at, 1);
          steps.push(`r at ${at} removed`);
        } else if (choice === 1) {
          next.splice(at, 0, randomRoute(rand, n++, endpoints));
          steps.push(`route added at ${at}`);
        } else if (choice === 2 && next.length > 1) {
          [next[0], next[at]] = [next[at] as TableRoute, next[0] as TableRoute];
          steps.push(`0 and ${at} swapped`);
        } else if (choice === 3) {
          // A Service's endpoints move: every route sending to it comes anew.
          const s = pick(rand, SERVICES);
          endpoints.set(s, (endpoints.get(s) ?? 2) + 1);
          for (let i = 0; i < next.length; i++) {
            const r = next[i] as TableRoute;
            if (!r.rules.some((rule) => rule.backends.some((b) => b.service === s))) continue;
            next[i] = {
              ...r,
              rules: r.rules.map((rule) => ({
                ...rule,
                backends: rule.backends.map((b) => (b.service === s ? backend(s, endpoints, b.weight) : b)),
              })),
            };
          }
          steps.push(`${s}'s endpoints moved`);
        } else {
          next[at] = randomRoute(rand, n++, endpoints);
          steps.push(`route at ${at} replaced`);
        }
        routes = next;
      }
      expect(kept).toBeGreaterThan(20);
    });
  }
});
