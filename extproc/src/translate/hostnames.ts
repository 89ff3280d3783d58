// Listener and route hostname intersection (HTTPRoute spec.hostnames).
// "*.example.com" matches "a.example.com" and "a.b.example.com", never "example.com".

/** Does a concrete or wildcard hostname `host` fall inside `pattern`? */
export function hostnameWithin(host: string, pattern: string): boolean {
  if (host === pattern) return true;
  if (!pattern.startsWith('*.')) return false;
  const suffix = pattern.slice(1); // ".example.com"
  const h = host.startsWith('*.') ? host.slice(1) : host;
  return h.endsWith(suffix) && h.length > suffix.length;
}

/**
 * The hostnames a route serves on a listener, or [] when they do not intersect.
 * `*` stands for "any host" (neither side set a hostname).
 */
export function intersectHostnames(
  listenerHostname: string | undefined,
  routeHostnames: readonly string[],
): string[] {
  if (listenerHostname === undefined) return routeHostnames.length > 0 ? [...routeHostnames] : ['*'];
  if (routeHostnames.length === 0) return [listenerHostname];
  const out = new Set<string>();
  for (const h of routeHostnames) {
    if (hostnameWithin(h, listenerHostname)) out.add(h);
    else if (hostnameWithin(listenerHostname, h)) out.add(listenerHostname);
  }
  return [...out];
}
