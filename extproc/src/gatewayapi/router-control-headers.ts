// The request headers Envoy's router reads as its own retry and timeout controls (and removes
// before forwarding). A route's header modifier is applied by the router just before it reads
// them, so one naming them would override the rule's retry stanza and timeouts (or switch
// retries on for a rule without one), and the backend would never see the header anyway.

/** Lower case, as Envoy matches header names. */
export const ROUTER_CONTROL_HEADERS: ReadonlySet<string> = new Set([
  'x-envoy-retry-on',
  'x-envoy-retry-grpc-on',
  'x-envoy-max-retries',
  'x-envoy-retriable-status-codes',
  'x-envoy-retriable-header-names',
  'x-envoy-upstream-rq-timeout-ms',
  'x-envoy-upstream-rq-per-try-timeout-ms',
  'x-envoy-upstream-rq-timeout-alt-response',
  'x-envoy-hedge-on-per-try-timeout',
]);

export function isRouterControlHeader(name: string): boolean {
  return ROUTER_CONTROL_HEADERS.has(name.toLowerCase());
}
