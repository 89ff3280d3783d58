// The generation memo's route configurations (envoy/generation-memo.ts virtualHosts): a list of
// IR hosts whose start and end are the last list's objects takes those hosts over without
// looking them up. After every step of seeded random edits (hosts replaced with or without new
// routes, added, removed, lists reversed, options changed, configurations added and removed),
// each list must be what making every host afresh gives, an unchanged IR host must keep its
// object, and the memo must hold exactly the hosts of the configurations last made.
import { describe, expect, it } from 'vitest';
import { GenerationMemo } from '../../extproc/src/envoy/generation-memo.js';
import type { IrVirtualHost } from '../../extproc/src/ir/gateway-ir.js';
import { pick, rng } from '../resolve/random-table.js';

type Json = Record<string, unknown>;

/** An IR host for the test: its hostname, and the routes (Envoy JSON) it is made of. */
interface Host {
  readonly ir: IrVirtualHost;
  readonly routes: readonly Json[];
}

const HOSTNAMES = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example', 'f.example', '*'];
const NAMES = ['http-8080', 'http-8081'];
const OPTIONS = ['{"debug":false}', '{"debug":true}'];

/** Under other options an entry's routes are other objects (gateway-config.ts): one list per options stands for them. */
const optionParts = new Map(OPTIONS.map((o) => [o, [{ options: o }]]));

const routeSets: readonly Json[][] = [0, 1, 2].map((i) => [{ match: { prefix: `/${i}` } }]);

function newHost(hostname: string, routes: readonly Json[]): Host {
  return { ir: { hostname, entries: [], countsAttempts: false }, routes };
}

/** A host as gateway-config.ts spells it out, under the options and configuration. */
function spelled(h: Host, name: string, options: string): Json {
  return { name: h.ir.hostname, in: name, options, routes: h.routes };
}

/** Route configuration name → its options and hosts. */
type Configs = Map<string, { options: string; hosts: Host[] }>;

function edit(configs: Configs, rnd: () => number): string {
  const name = pick(rnd, NAMES);
  const c = configs.get(name);
  if (!c) {
    configs.set(name, { options: pick(rnd, OPTIONS), hosts: [newHost(pick(rnd, HOSTNAMES), routeSets[0]!)] });
    return `${name} added`;
  }
  const r = rnd();
  const at = Math.floor(rnd() * c.hosts.length);
  const h = c.hosts[at];
  if (r < 0.05) {
    configs.delete(name);
    return `${name} removed`;
  }
  if (r < 0.1) {
    c.options = pick(rnd, OPTIONS);
    return `${name} options ${c.options}`;
  }
  if (r < 0.35 && h) {
    // A new IR object for the same hostname: with the same routes (kept by key) or others.
    c.hosts[at] = newHost(h.ir.hostname, rnd() < 0.5 ? h.routes : pick(rnd, routeSets));
    return `${name}: ${h.ir.hostname} replaced`;
  }
  if (r < 0.55 && h) {
    c.hosts.splice(at, 1);
    return `${name}: ${h.ir.hostname} removed`;
  }
  if (r < 0.62 && c.hosts.length > 1) {
    c.hosts.reverse();
    return `${name}: reversed`;
  }
  const free = HOSTNAMES.filter((n) => !c.hosts.some((x) => x.ir.hostname === n));
  if (free.length === 0) return 'nothing';
  const n = pick(rnd, free);
  c.hosts.splice(at, 0, newHost(n, pick(rnd, routeSets)));
  return `${name}: ${n} added`;
}

/** A generation that fails after making one host of a new list (a generator's error): never ended. */
function failHalfway(memo: GenerationMemo, configs: Configs, steps: string[]): void {
  const [name, c] = [...configs][0] ?? [];
  if (!name || !c) return;
  memo.begin();
  const hosts = [newHost('z.example', routeSets[1]!), ...c.hosts];
  expect(() =>
    memo.virtualHosts(
      name,
      c.options,
      hosts.map((h) => h.ir),
      (vh) => {
        // Made and held by the memo, then the generator fails.
        memo.host(vh, name, c.options, `${name}\0${vh.hostname}`, [hosts[0]!.routes], () => ({}));
        throw new Error('generator failed');
      },
    ),
  ).toThrow('generator failed');
  steps.push(`${name}: a generation failed halfway`);
}

describe('GenerationMemo.virtualHosts', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`gives what making every host afresh gives, and holds only what is in use (seed ${seed})`, () => {
      const rnd = rng(seed);
      const memo = new GenerationMemo({});
      const configs: Configs = new Map([[NAMES[0]!, { options: OPTIONS[0]!, hosts: [] }]]);
      let last = new Map<IrVirtualHost, { name: string; options: string; host: Json }>();
      const steps: string[] = [];
      for (let step = 0; step < 150; step++) {
        if (rnd() < 0.1) failHalfway(memo, configs, steps);
        memo.begin();
        const now = new Map<IrVirtualHost, { name: string; options: string; host: Json }>();
        let held = 0;
        for (const [name, { options, hosts }] of configs) {
          const made = memo.virtualHosts(
            name,
            options,
            hosts.map((h) => h.ir),
            (vh) => {
              const h = hosts.find((x) => x.ir === vh)!;
              const key = `${name}\0${vh.hostname}`;
              return memo.host(vh, name, options, key, [h.routes, optionParts.get(options)!], () =>
                spelled(h, name, options),
              );
            },
          );
          expect(made, steps.join('; ')).toEqual(hosts.map((h) => spelled(h, name, options)));
          hosts.forEach((h, i) => {
            const was = last.get(h.ir);
            // The same IR host in the same configuration, under the same options: the same object.
            if (was?.name === name && was.options === options)
              expect(made[i], steps.join('; ')).toBe(was.host);
            now.set(h.ir, { name, options, host: made[i]! });
          });
          held += hosts.length;
        }
        memo.end();
        expect(memo.keptHosts, steps.join('; ')).toBe(held);
        last = now;
        steps.push(edit(configs, rnd));
      }
    });
  }
});
