// RouteResources keeps each virtual host's VHDS resource from one generation to the next (by
// route configuration and hostname, while the host's encoding is the same): after every step of
// seeded random edits, what it makes must be exactly what a fresh one makes of the same input, and
// the step from the map it made last to this one (known, not worked out) what working it out gives.
import { describe, expect, it } from 'vitest';
import type { Resource } from '../../extproc/src/xds/ads-resource.js';
import { step } from '../../extproc/src/xds/ads-delta-step.js';
import { RouteResources } from '../../extproc/src/xds/ads-routes.js';
import { pick, rng } from '../resolve/random-table.js';

type Json = Record<string, unknown>;

/** A virtual host of `name` answering `status` on `path`. */
const host = (name: string, path: string, status: number): Json => ({
  name,
  domains: [name],
  routes: [{ match: { prefix: path }, direct_response: { status } }],
});

/** Route configuration name → its hosts (the same objects while unchanged, as the generator keeps them). */
type Configs = Map<string, Json[]>;

const HOSTNAMES = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example', '*'];
const CONFIGS = ['http-8080', 'http-8081', 'https-8443'];

/** Route configurations whose own fields (not their hosts) are the other way: validate_clusters off. */
type Heads = Set<string>;

/** One random edit: a host changed, added, removed or moved; a configuration added, removed or its own fields changed. */
function edit(configs: Configs, heads: Heads, rnd: () => number): string {
  // Besides the edit below, now and then a configuration's own fields change.
  if (rnd() < 0.1) {
    const which = pick(rnd, CONFIGS);
    if (heads.has(which)) heads.delete(which);
    else heads.add(which);
    return `${which}: validate_clusters ${heads.has(which) ? 'off' : 'as before'}; ${edit(configs, heads, rnd)}`;
  }
  const name = pick(rnd, CONFIGS);
  const hosts = configs.get(name);
  const r = rnd();
  if (!hosts) {
    configs.set(name, [host(pick(rnd, HOSTNAMES), '/', 200)]);
    return `${name} added`;
  }
  if (r < 0.1) {
    configs.delete(name);
    return `${name} removed`;
  }
  const at = Math.floor(rnd() * hosts.length);
  if (r < 0.4 && hosts.length > 0) {
    const h = hosts[at] as Json;
    hosts[at] = host(h['name'] as string, `/p${Math.floor(rnd() * 3)}`, pick(rnd, [200, 404]));
    return `${name}: host ${String(h['name'])} changed`;
  }
  if (r < 0.6 && hosts.length > 0) {
    const [h] = hosts.splice(at, 1);
    return `${name}: host ${String(h?.['name'])} removed`;
  }
  if (r < 0.7 && hosts.length > 1) {
    hosts.reverse();
    return `${name}: hosts reversed`;
  }
  const free = HOSTNAMES.filter((n) => !hosts.some((h) => h['name'] === n));
  if (free.length === 0) return 'nothing';
  const n = pick(rnd, free);
  hosts.splice(at, 0, host(n, '/', pick(rnd, [200, 503])));
  return `${name}: host ${n} added`;
}

/** The generation's route configurations, as the generator writes them. */
function configurations(configs: Configs, heads: Heads): Json[] {
  return [...configs].map(([name, hosts]) => ({
    name,
    ...(heads.has(name) ? { validate_clusters: false } : {}),
    virtual_hosts: [...hosts],
  }));
}

/** What a stream is sent, in order: each resource's name, version and bytes. */
function view(resources: ReadonlyMap<string, Resource>): unknown[] {
  return [...resources].map(([key, r]) => [
    key,
    r.name,
    r.hash,
    r.any.type_url,
    r.any.value.toString('base64'),
  ]);
}

describe('RouteResources kept across generations', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`makes the virtual hosts a fresh one makes, after every step of random edits (seed ${seed})`, () => {
      const rnd = rng(seed);
      const configs: Configs = new Map([['http-8080', [host('a.example', '/', 200)]]]);
      const heads: Heads = new Set();
      const kept = new RouteResources();
      const steps: string[] = [];
      let held: ReadonlyMap<string, Resource> | undefined;
      for (let k = 0; k < 80; k++) {
        const input = configurations(configs, heads);
        const encoded = kept.encode(input);
        const fresh = new RouteResources().encode(input);
        // Some generations are never asked for their virtual hosts (no VHDS stream took them).
        if (rnd() < 0.8) {
          const made = encoded.virtualHosts();
          expect(view(made), steps.join('; ')).toEqual(view(fresh.virtualHosts()));
          // The step a delta stream holding the last map is sent: as worked out over copies of both.
          if (held) expect(step(held, made), steps.join('; ')).toEqual(step(new Map(held), new Map(made)));
          held = made;
        }
        expect(view(encoded.heads), steps.join('; ')).toEqual(view(fresh.heads));
        steps.push(edit(configs, heads, rnd));
      }
    });
  }
});
