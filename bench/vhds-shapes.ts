// The shapes vhds-apply-cost gives Envoy, each differing from what gateway mode sends (`sent`)
// in one thing: a route configuration's head (without hosts) and its virtual hosts as Envoy's
// JSON, before encoding. Shapes marked "not the same" change behaviour: they only measure what
// a part costs.
import { IDEMPOTENT_RESET_FILTER_NAME, TYPE_FILTER_CONFIG } from '../extproc/src/envoy/envoy-names.js';
import type { Json } from '../extproc/src/json.js';

export const SHAPES = [
  // As gateway mode sends it.
  'sent',
  // The same behaviour: each route that runs the `reset` filter switches it on alone, and the
  // route configuration says nothing (the form before the switch moved to the configuration).
  'switch-per-route',
  // Not the same: no route runs the `reset` filter.
  'no-switch',
  // Not the same: no retry policy (and so no switch).
  'no-retry',
  // Not the same in access logs: routes without their name.
  'no-route-name',
  // Virtual hosts named by number instead of hostname (`<route configuration>/<i>`).
  'short-host-names',
  // Route and host names 200 characters longer: what a name's length costs.
  'long-names',
  // Not the same: match and cluster only.
  'bare',
] as const;

export type Shape = (typeof SHAPES)[number];

export interface RouteTable {
  readonly head: Json;
  /** Each with its resource name: `<route configuration>/<hostname>`. */
  readonly hosts: readonly { readonly name: string; readonly host: Json }[];
}

const PAD = 'x'.repeat(200);

function routesOf(host: Json): Json[] {
  return host['routes'] as Json[];
}

function withRoutes(host: Json, each: (r: Json) => Json): Json {
  return { ...host, routes: routesOf(host).map(each) };
}

function without(o: Json, ...keys: string[]): Json {
  const out = { ...o };
  for (const k of keys) delete out[k];
  return out;
}

/** A per-filter map without the `reset` filter's switch. */
function unswitchedMap(o: Json | undefined): Json {
  return without(o ?? {}, IDEMPOTENT_RESET_FILTER_NAME);
}

/** A route or configuration without the `reset` switch (and its per-filter map when that was all of it). */
function unswitched(o: Json): Json {
  const perFilter = unswitchedMap(o['typed_per_filter_config'] as Json | undefined);
  const rest = without(o, 'typed_per_filter_config');
  return Object.keys(perFilter).length > 0 ? { ...rest, typed_per_filter_config: perFilter } : rest;
}

/** Whether a route runs the `reset` filter: its own switch, else its configuration's. */
function runsReset(r: Json, head: Json): boolean {
  const own = ((r['typed_per_filter_config'] as Json | undefined) ?? {})[IDEMPOTENT_RESET_FILTER_NAME] as
    Json | undefined;
  if (own) return own['disabled'] !== true;
  return IDEMPOTENT_RESET_FILTER_NAME in ((head['typed_per_filter_config'] as Json | undefined) ?? {});
}

/** Each route that runs the filter switches it on alone; the configuration says nothing. */
function switchPerRoute(t: RouteTable): RouteTable {
  const on = { '@type': TYPE_FILTER_CONFIG, config: {} };
  const hosts = t.hosts.map(({ name, host }) => ({
    name,
    host: withRoutes(host, (r) => {
      const rest = unswitched(r);
      if (!runsReset(r, t.head)) return rest;
      const perFilter = unswitchedMap(r['typed_per_filter_config'] as Json | undefined);
      return { ...rest, typed_per_filter_config: { ...perFilter, [IDEMPOTENT_RESET_FILTER_NAME]: on } };
    }),
  }));
  return { head: unswitched(t.head), hosts };
}

/**
 * The two steps of a change of the route configuration's switch over VHDS (xds/ads-server.ts):
 * the hosts with every route saying its own switch (the bridge), then the head with the switch
 * turned the other way.
 */
export function tipped(t: RouteTable): RouteTable {
  const on = { '@type': TYPE_FILTER_CONFIG, config: {} };
  const off = { '@type': TYPE_FILTER_CONFIG, disabled: true };
  const hosts = t.hosts.map(({ name, host }) => ({
    name,
    host: withRoutes(host, (r) => {
      const perFilter = unswitchedMap(r['typed_per_filter_config'] as Json | undefined);
      const own = runsReset(r, t.head) ? on : off;
      return {
        ...unswitched(r),
        typed_per_filter_config: { ...perFilter, [IDEMPOTENT_RESET_FILTER_NAME]: own },
      };
    }),
  }));
  const switched =
    IDEMPOTENT_RESET_FILTER_NAME in ((t.head['typed_per_filter_config'] as Json | undefined) ?? {});
  const perFilter = unswitchedMap(t.head['typed_per_filter_config'] as Json | undefined);
  const head = switched
    ? unswitched(t.head)
    : { ...t.head, typed_per_filter_config: { ...perFilter, [IDEMPOTENT_RESET_FILTER_NAME]: on } };
  return { head, hosts };
}

function eachRoute(t: RouteTable, each: (r: Json) => Json): RouteTable {
  return { head: t.head, hosts: t.hosts.map(({ name, host }) => ({ name, host: withRoutes(host, each) })) };
}

function renamedHosts(t: RouteTable, rename: (name: string, i: number) => string): RouteTable {
  return { head: t.head, hosts: t.hosts.map(({ name, host }, i) => ({ name: rename(name, i), host })) };
}

/** `t` in `shape`. */
export function shaped(t: RouteTable, shape: Shape): RouteTable {
  const rc = String(t.head['name']);
  switch (shape) {
    case 'sent':
      return t;
    case 'switch-per-route':
      return switchPerRoute(t);
    case 'no-switch':
      return { ...eachRoute(t, unswitched), head: unswitched(t.head) };
    case 'no-retry':
      return {
        ...eachRoute(t, (r) => ({ ...unswitched(r), route: without(r['route'] as Json, 'retry_policy') })),
        head: unswitched(t.head),
      };
    case 'no-route-name':
      return eachRoute(t, (r) => without(r, 'name'));
    case 'short-host-names':
      return renamedHosts(t, (_, i) => `${rc}/${i}`);
    case 'long-names':
      return renamedHosts(
        eachRoute(t, (r) => ({ ...r, name: `${String(r['name'])}/${PAD}` })),
        (name) => `${name}.${PAD}`,
      );
    case 'bare':
      return {
        ...eachRoute(t, (r) => ({ match: r['match'], route: { cluster: (r['route'] as Json)['cluster'] } })),
        head: unswitched(t.head),
      };
  }
}
