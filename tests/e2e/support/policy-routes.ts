// Builds a gateway-mode-style route table by hand: one route per scenario, each with
// its policy token in route metadata (what gateway mode generates), so a test can put
// many policies in front of one Envoy. Routes are matched by path prefix, longest first.
import { parse, stringify } from 'yaml';
import type { Policy } from '../../../extproc/src/table/policy.js';
import { encodePolicyToken } from '../../../extproc/src/table/policy-token.js';

export interface PolicyRoute {
  readonly prefix: string;
  readonly policy: Policy;
  readonly cluster?: string;
  /** The route's own timeout, as an operator might have set it (e.g. `0.3s`). */
  readonly routeTimeout?: string;
}

type Node = Record<string, unknown>;

/** Replaces the first virtual host's routes of `yamlText` with one route per entry. */
export function withPolicyRoutes(yamlText: string, routes: readonly PolicyRoute[]): string {
  const doc = parse(yamlText) as Node;
  const listener = ((doc['static_resources'] as Node)['listeners'] as Node[])[0] as Node;
  const hcm = (((listener['filter_chains'] as Node[])[0] as Node)['filters'] as Node[])[0] as Node;
  const vhost = (
    ((hcm['typed_config'] as Node)['route_config'] as Node)['virtual_hosts'] as Node[]
  )[0] as Node;
  const template = (vhost['routes'] as Node[])[0] as Node;
  const sorted = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  vhost['routes'] = sorted.map((r) => {
    const route = structuredClone(template);
    route['match'] = { prefix: r.prefix };
    route['metadata'] = { filter_metadata: { steadfast: { policy: encodePolicyToken(r.policy) } } };
    (route['route'] as Node)['cluster'] = r.cluster ?? 'app';
    if (r.routeTimeout) (route['route'] as Node)['timeout'] = r.routeTimeout;
    return route;
  });
  return stringify(doc);
}
