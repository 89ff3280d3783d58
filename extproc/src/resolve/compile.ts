// The IR (ir/gateway-ir.ts) → a compiled resolver: one index per Gateway port (the routes
// that port serves, as gateway mode gives each port its own Envoy listener);
// in each, hostnames go into maps (exact, then wildcard suffixes from the longest), each
// hostname's matches into a HostBucket indexed by path, so a lookup costs a few map reads,
// not a scan of routes.
import type { GatewayIr, IrPort, ServedRoute } from '../ir/gateway-ir.js';
import { portIsolation } from '../ir/listener-isolation.js';
import { touchedHostnames } from '../ir/touched-hostnames.js';
import { compileEntry } from './entry.js';
import { HostBucket } from './host-bucket.js';
import { LayeredMap } from './layered-map.js';
import { encodeAnswerScope, tableGeneration } from './answer-scope.js';
import {
  type ListenerChoice,
  type RequestListener,
  type ResolveRequest,
  type ResolveResult,
  hostOf,
} from './request.js';

export interface Resolver {
  /** The request's rule among the routes of its Gateway port (`listenerOf(request.listener)`). */
  resolve(request: ResolveRequest, choice?: ListenerChoice): ResolveResult | undefined;
  /** Which Gateway port's routes a request on this listener gets, and how that was told. */
  listenerOf(listener: RequestListener | undefined): ListenerChoice;
  /** The ports of the Gateway HTTP and HTTPS listeners, ascending (empty for a table without listeners). */
  readonly ports: readonly number[];
  /** Number of (port, hostname, match) entries compiled. */
  readonly size: number;
  /** The request headers any match reads, lower-case (besides `:authority`, `:path`, `:method`). */
  readonly headersRead: ReadonlySet<string>;
  /** The table's generation (a digest: equal tables, equal generations). */
  readonly generation: string;
  /**
   * The scope of every answer for requests to this authority (answer-scope.ts): what beyond
   * host, method and path the answer depends on (the query, the listener, the values of the
   * headers the hostname's matches read). Undefined when that cannot be keyed within the
   * filter's bounds (too many or too long header names): such answers are not reused.
   */
  scope(authority: string): string | undefined;
}

/** Hosts whose scope is remembered; past this the memo starts again (wildcards admit any host). */
const SCOPE_MEMO_ENTRIES = 4096;

/** The routes of one port, indexed. */
interface PortIndex {
  readonly size: number;
  resolve(req: ResolveRequest): ResolveResult | undefined;
  /** Every bucket resolve() may consult for `host` (lower-case, no port), whatever the path. */
  consulted(host: string): HostBucket[];
}

/**
 * What a resolver keeps for the next one (`steadfast serve` holds one across reloads): each
 * port's routes and buckets. A bucket is kept while the routes it indexes are the same objects
 * in the same order, and the routes of a port are compared with the last compile's (as
 * objects, from both ends first), so a change to one route among 10,000 looks at its hostnames
 * alone: their buckets are built again, the rest are taken over without being visited. A kept bucket's entries carry
 * their routes' old table positions: only their order within the bucket matters, and that is
 * the same.
 */
export class ResolverMemo {
  /** By port (its key). */
  private last = new Map<string, PortBuckets>();
  private next = new Map<string, PortBuckets>();
  /** Buckets the last compile built anew (the rest were kept). */
  builtBuckets = 0;

  begin(): void {
    this.next = new Map();
    this.builtBuckets = 0;
  }

  end(): void {
    this.last = this.next;
    this.next = new Map();
  }

  /** A port's buckets (`key`): those of the hostnames its changed routes name built again. */
  port(key: string, routes: readonly ServedRoute[]): PortBuckets {
    const last = this.last.get(key);
    const touched = last && touchedHostnames(last.routes, routes, MAX_TOUCHED_HOSTNAMES);
    // No hostname touched: the same routes in the same order, so the same buckets and maps.
    const made =
      touched?.size === 0
        ? { ...(last as PortBuckets), routes }
        : touched
          ? this.rebuilt(last as PortBuckets, routes, touched)
          : this.built(routes, last);
    this.next.set(key, made);
    return made;
  }

  /** Every hostname's bucket, kept where it indexes the same routes as in `last`. */
  private built(routes: readonly ServedRoute[], last: PortBuckets | undefined): PortBuckets {
    const byHostname = routesByHostname(routes, undefined);
    if (!byHostname.has('*')) byHostname.set('*', []);
    const buckets = new Map<string, KeptBucket>();
    for (const [hostname, list] of byHostname) buckets.set(hostname, this.bucket(last, hostname, list));
    return portBucketsOf(routes, buckets);
  }

  /** `last`'s buckets, but those of the `touched` hostnames, built again from `routes`. */
  private rebuilt(
    last: PortBuckets,
    routes: readonly ServedRoute[],
    touched: ReadonlySet<string>,
  ): PortBuckets {
    const byHostname = routesByHostname(routes, touched);
    const changes = new Map<string, KeptBucket | undefined>();
    const wildcard = new Map(last.wildcard);
    let size = last.size;
    for (const hostname of touched) {
      size -= last.buckets.get(hostname)?.size ?? 0;
      const list = byHostname.get(hostname);
      if (!list && hostname !== '*') {
        changes.set(hostname, undefined);
        placeWildcard(wildcard, hostname, undefined);
        continue;
      }
      const kept = this.bucket(last, hostname, list ?? []);
      changes.set(hostname, kept);
      size += kept.size;
      placeWildcard(wildcard, hostname, kept.bucket);
    }
    // The last compile's map with these changes, not a copy of its 10,000 entries.
    const buckets = last.buckets.with(changes);
    const any = (buckets.get('*') as KeptBucket).bucket;
    return { routes, buckets, wildcard, any, size };
  }

  /** The bucket of `hostname`, kept from `last` when it indexes the same routes. */
  private bucket(
    last: PortBuckets | undefined,
    hostname: string,
    routes: readonly ServedRoute[],
  ): KeptBucket {
    const kept = last?.buckets.get(hostname);
    if (kept && sameRoutes(kept.routes, routes)) return kept;
    this.builtBuckets++;
    return buildBucket(hostname, routes);
  }
}

/** Past this many hostnames touched in a port, its buckets are all looked at again (kept where the same). */
const MAX_TOUCHED_HOSTNAMES = 1024;

/** Each hostname's routes in table order (only the hostnames of `only`, when given). */
function routesByHostname(
  routes: readonly ServedRoute[],
  only: ReadonlySet<string> | undefined,
): Map<string, ServedRoute[]> {
  const byHostname = new Map<string, ServedRoute[]>();
  for (const served of routes) {
    for (const h of served.route.hostnames) {
      if (only && !only.has(h)) continue;
      const list = byHostname.get(h);
      if (list) list.push(served);
      else byHostname.set(h, [served]);
    }
  }
  return byHostname;
}

interface KeptBucket {
  readonly routes: readonly ServedRoute[];
  readonly bucket: HostBucket;
  /** Its (hostname, match) entries. */
  readonly size: number;
}

function sameRoutes(a: readonly ServedRoute[], b: readonly ServedRoute[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if ((a[i] as ServedRoute).route !== (b[i] as ServedRoute).route) return false;
  return true;
}

function buildBucket(hostname: string, routes: readonly ServedRoute[]): KeptBucket {
  const bucket = new HostBucket(hostname);
  let size = 0;
  for (const { route, order } of routes) {
    for (const rule of route.rules) {
      for (const match of rule.matches) {
        bucket.add(compileEntry(route, rule, match, order));
        size++;
      }
    }
  }
  bucket.seal();
  return { routes, bucket, size };
}

/**
 * A port's buckets: one per exact hostname, one per wildcard suffix, and the one of any host;
 * and what they were made from, for the next compile.
 */
interface PortBuckets {
  readonly routes: readonly ServedRoute[];
  /** Every hostname's, `*` included: an exact hostname's bucket is looked up here (exactBucket). */
  readonly buckets: LayeredMap<KeptBucket>;
  /** Keyed by the suffix after `*`, e.g. `.example.com`. */
  readonly wildcard: ReadonlyMap<string, HostBucket>;
  readonly any: HostBucket;
  readonly size: number;
}

/** Puts a wildcard's bucket under its suffix (`*.x` under `.x`; undefined: takes it out); other hostnames have none. */
function placeWildcard(
  wildcard: Map<string, HostBucket>,
  hostname: string,
  bucket: HostBucket | undefined,
): void {
  if (!hostname.startsWith('*.')) return;
  if (bucket) wildcard.set(hostname.slice(1), bucket);
  else wildcard.delete(hostname.slice(1));
}

/**
 * The bucket of a request's host as an exact hostname: the hostname's own (a request naming a
 * wildcard or `*` as its host gets none, as those are not exact hostnames). The buckets' map
 * serves as the exact hostnames' map, so a change does not copy a second 10,000-entry map.
 */
function exactBucket(buckets: LayeredMap<KeptBucket>, host: string): HostBucket | undefined {
  return host === '*' || host.startsWith('*.') ? undefined : buckets.get(host)?.bucket;
}

/** The lookup maps of every hostname's bucket (`*`'s among them). */
function portBucketsOf(
  routes: readonly ServedRoute[],
  buckets: ReadonlyMap<string, KeptBucket>,
): PortBuckets {
  const wildcard = new Map<string, HostBucket>();
  let size = 0;
  for (const [hostname, kept] of buckets) {
    size += kept.size;
    placeWildcard(wildcard, hostname, kept.bucket);
  }
  const any = (buckets.get('*') as KeptBucket).bucket;
  return { routes, buckets: LayeredMap.of(buckets), wildcard, any, size };
}

function compileIndex(routes: readonly ServedRoute[], memo: ResolverMemo, key: string): PortIndex {
  const { buckets, wildcard, any, size } = memo.port(key, routes);
  const wildcardSuffixes = wildcard.size > 0;

  return {
    size,
    consulted(host) {
      const out: HostBucket[] = [any];
      const own = exactBucket(buckets, host);
      if (own) out.push(own);
      if (wildcardSuffixes) {
        for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
          const b = wildcard.get(host.slice(dot));
          if (b) out.push(b);
        }
      }
      return out;
    },
    resolve(req) {
      const host = hostOf(req.authority);
      const q = req.path.indexOf('?');
      const path = q === -1 ? req.path : req.path.slice(0, q);
      const query = q === -1 ? '' : req.path.slice(q + 1);
      const { method, headers } = req;
      // Hostname precedence: the exact hostname, then wildcards from the longest suffix, then any host.
      let b = exactBucket(buckets, host);
      let e = b?.lookup(path, method, headers, query);
      if (b && e) return b.result(e);
      if (wildcardSuffixes) {
        for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
          b = wildcard.get(host.slice(dot));
          e = b?.lookup(path, method, headers, query);
          if (b && e) return b.result(e);
        }
      }
      e = any.lookup(path, method, headers, query);
      return e ? any.result(e) : undefined;
    },
  };
}

/**
 * A port's index. Where its listeners have different hostnames (ir/listener-isolation.ts), one
 * index per listener hostname over the routes attached there, and a request goes to the index
 * of the listener its host belongs to, as gateway mode's virtual hosts do.
 */
function portIndex(port: IrPort, memo: ResolverMemo): PortIndex {
  const key = String(port.port);
  const isolation = portIsolation(port.listeners);
  if (!isolation) return compileIndex(port.routes, memo, key);
  const byOwner = new Map(
    isolation.keys.map((owner) => [
      owner,
      compileIndex(
        port.routes.filter((r) => isolation.allows(r.route, owner)),
        memo,
        `${key}\0${owner}`,
      ),
    ]),
  );
  const indexOf = (authority: string) => {
    const owner = isolation.ownerOf(hostOf(authority));
    return owner === undefined ? undefined : byOwner.get(owner);
  };
  let size = 0;
  for (const index of byOwner.values()) size += index.size;
  return {
    size,
    consulted: (host) => byOwner.get(isolation.ownerOf(host) ?? '')?.consulted(host) ?? [],
    resolve: (req) => indexOf(req.authority)?.resolve(req),
  };
}

const UNKNOWN: ListenerChoice = Object.freeze({ port: undefined, by: 'unknown' });

/** Every port's index, and the only one when there is nothing to tell apart (one port, or no listeners). */
interface PortIndexes {
  readonly byPort: ReadonlyMap<number, PortIndex>;
  readonly single?: { readonly index: PortIndex; readonly choice: ListenerChoice };
  readonly noListeners: boolean;
}

function portIndexes(ir: GatewayIr, memo: ResolverMemo): PortIndexes {
  if (ir.listeners.length === 0) {
    // A table without listeners (built by hand, or `--policy-token`-like tests): one set of routes.
    const ordered = ir.routes.map((route, order) => ({ route, order }));
    return {
      byPort: new Map(),
      single: {
        index: compileIndex(ordered, memo, ''),
        choice: Object.freeze({ port: undefined, by: 'single_port' }),
      },
      noListeners: true,
    };
  }
  const byPort = new Map<number, PortIndex>();
  for (const port of ir.ports) byPort.set(port.port, portIndex(port, memo));
  if (byPort.size > 1) return { byPort, noListeners: false };
  const [port, index] = [...byPort][0] ?? [undefined, compileIndex([], memo, '')];
  return {
    byPort,
    single: { index, choice: Object.freeze({ port, by: 'single_port' }) },
    noListeners: false,
  };
}

/** Which port's routes a request on a listener gets: its choices are made once, so telling allocates nothing. */
function listenerChooser(
  ports: readonly number[],
  { single, noListeners }: PortIndexes,
): (l: RequestListener | undefined) => ListenerChoice {
  const byMetadata = new Map(ports.map((port) => [port, Object.freeze({ port, by: 'metadata' as const })]));
  const byDestination = new Map(
    ports.map((port) => [port, Object.freeze({ port, by: 'destination_port' as const })]),
  );
  const singleChoice = single?.choice;
  return (l) => {
    const declared = l?.gatewayPort;
    // The operator's word wins: a port without routes answers nothing, as its own listener would.
    if (declared !== undefined && !noListeners) {
      return byMetadata.get(declared) ?? Object.freeze({ port: declared, by: 'metadata' });
    }
    if (singleChoice) return singleChoice;
    const local = l?.destinationPort;
    return (local !== undefined ? byDestination.get(local) : undefined) ?? UNKNOWN;
  };
}

/**
 * A host's answer scope, over every port's index: which one a request gets depends on its
 * listener, which the key holds whenever the table has listeners (`l=1`).
 */
function scopeOfHost(
  all: readonly PortIndex[],
  generation: string,
  noListeners: boolean,
): (host: string) => string | null {
  return (host) => {
    const consulted = all.flatMap((index) => index.consulted(host));
    const headers = new Set<string>();
    for (const b of consulted) for (const name of b.headersRead) headers.add(name);
    return encodeAnswerScope(generation, {
      query: consulted.some((b) => b.readsQuery),
      listener: !noListeners,
      headers: [...headers],
    });
  };
}

export function compileResolver(
  ir: GatewayIr,
  generation: string = tableGeneration(ir.digest),
  memo: ResolverMemo = new ResolverMemo(),
): Resolver {
  memo.begin();
  const indexed = portIndexes(ir, memo);
  memo.end();
  const { byPort } = indexed;
  const single = indexed.single?.index;
  const ports = [...byPort.keys()].sort((a, b) => a - b);
  const indexes = ports.map((p) => byPort.get(p) as PortIndex);
  let size = single?.size ?? 0;
  if (!single) for (const index of indexes) size += index.size;
  const listenerOf = listenerChooser(ports, indexed);
  const scopeOf = scopeOfHost(single ? [single] : indexes, generation, indexed.noListeners);
  const scopes = new Map<string, string | null>();

  return {
    ports,
    size,
    headersRead: new Set(ir.headersRead),
    generation,
    scope(authority) {
      const host = hostOf(authority);
      let s = scopes.get(host);
      if (s === undefined) {
        if (scopes.size >= SCOPE_MEMO_ENTRIES) scopes.clear();
        s = scopeOf(host);
        scopes.set(host, s);
      }
      return s ?? undefined;
    },
    listenerOf,
    resolve(req, choice = listenerOf(req.listener)) {
      if (choice.by === 'single_port') return single?.resolve(req);
      if (choice.port !== undefined) return byPort.get(choice.port)?.resolve(req);
      // The port cannot be told: answer only what every port would answer, so a request
      // never gets the policy of a route attached to another listener.
      let first: ResolveResult | undefined;
      for (let i = 0; i < indexes.length; i++) {
        const r = (indexes[i] as PortIndex).resolve(req);
        if (i === 0) first = r;
        else if (r?.rule.id !== first?.rule.id) return undefined;
      }
      return first;
    },
  };
}
