// Listener isolation: on a port with listeners of different hostnames, a request belongs to the
// most specific listener whose hostname matches its host (exact, then the longest wildcard, then
// the listener without one), and only routes attached to that listener may serve it — another
// listener's routes never answer it, even where their hostnames would match (upstream's
// GatewayHTTPListenerIsolation). Pure: reads the port's listeners and its routes.
import type { TableListener, TableRoute } from '../policy/policy-table.js';

/** A listener's hostname as a virtual host key: `*` for none. */
function keyOf(l: TableListener): string {
  return l.hostname ?? '*';
}

/** Whether a listener with hostname `owner` (a key) serves the hostname `key`. */
function serves(owner: string, key: string): boolean {
  if (owner === '*' || owner === key) return true;
  return owner.startsWith('*.') && key.endsWith(owner.slice(1)) && key.length > owner.length - 1;
}

export interface Isolation {
  /** The port's listener hostnames (`*` for none): each needs its own virtual host, routes or not. */
  readonly keys: readonly string[];
  /** The listener hostname that owns a virtual host key or a request's host; undefined when no listener here serves it. */
  ownerOf(key: string): string | undefined;
  /** Whether a route may serve the requests of a virtual host key. */
  allows(route: TableRoute, key: string): boolean;
}

/**
 * The isolation of one port's listeners, or undefined where there is nothing to isolate (every
 * listener has the same hostname, so whichever a request belongs to serves the same routes).
 */
export function portIsolation(listeners: readonly TableListener[]): Isolation | undefined {
  const keys = [...new Set(listeners.map(keyOf))];
  if (keys.length < 2) return undefined;
  // Most specific first: exact hostnames, then wildcards from the longest, then `*`.
  const ranked = [...keys].sort((a, b) => rank(b) - rank(a));
  const keyById = new Map(listeners.map((l) => [l.id, keyOf(l)]));
  const attachedTo = (route: TableRoute, owner: string) =>
    route.listeners.some((id) => keyById.get(id) === owner);
  const owners = new Map<string, string | undefined>();
  const ownerOf = (key: string): string | undefined => {
    if (!owners.has(key))
      owners.set(
        key,
        ranked.find((o) => serves(o, key)),
      );
    return owners.get(key);
  };
  return {
    keys,
    ownerOf,
    allows(route, key) {
      const owner = ownerOf(key);
      return owner !== undefined && attachedTo(route, owner);
    },
  };
}

/** How specific a listener hostname is: an exact name above any wildcard, longer wildcards above shorter, `*` last. */
function rank(key: string): number {
  if (key === '*') return 0;
  return key.startsWith('*.') ? key.length : Number.MAX_SAFE_INTEGER;
}
