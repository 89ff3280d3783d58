// The Envoy routes of one IR entry (a match with its rule's decided action, ir/rule-action.ts):
// a redirect, a 500, or the rule's cluster (or weighted split) with its retries and timeout
// as `retry_policy` and `timeout`, header modifiers, the policy token in route metadata where
// the filter reads it (session rules and rules with a backoff floor), the filter and
// stateful_session switched on (session rules only), and the idempotent methods' `reset`
// switched on where the retries differ by method (or, where the route configuration switches it
// on for all, off everywhere else; or said on every route); CORS wraps them (cors-routes.ts).
import type { HeaderModifier } from '../policy/route-filters.js';
import type { IrEntry, IrForward, IrRule } from '../ir/rule-action.js';
import type { IrTarget } from '../ir/rule-clusters.js';
import type { RouterRetry } from '../ir/router-plan.js';
import { DEBUG_POLICY_HEADER, METADATA_NAMESPACE, METADATA_POLICY_KEY, PIN_HEADER } from './envoy-names.js';
import { corsRoutes } from './cors-routes.js';
import { durationMs } from './envoy-duration.js';
import { type ResetDefault, resetSwitch, sessionRouteFilters } from './http-filters.js';
import { type ListenerContext, redirectRoutes, rewriteFields } from './path-filters.js';
import { RETRY_OTHER_HOSTS } from './retry-hosts.js';
import { routeMatch, withMatchHeaders } from './route-match.js';
import { type Json, sharedShape } from '../json.js';

/**
 * Envoy's own jittered backoff, as short as Envoy allows (values under 1 ms are rounded up
 * to 1 ms): the GEP-1731 backoff floor is the upstream filter's hold, and Envoy's jitter
 * comes on top of it.
 */
export const RETRY_BACK_OFF = { base_interval: '0.001s', max_interval: '0.001s' } as const;

export interface RouteOptions {
  /** Echo the policy token on every response (x-steadfast-policy): for trying things out only. */
  readonly debug?: boolean;
  /** The listener the routes serve (a redirect keeps its scheme and port); default HTTP on 80. */
  readonly listener?: ListenerContext;
  /**
   * Where their route configuration leaves the idempotent methods' `reset` filter (default off):
   * a route says its own switch where it differs, or always (`explicit`; http-filters.ts).
   */
  readonly resetDefault?: ResetDefault;
}

const DEFAULT_LISTENER: ListenerContext = { port: 80, https: false };

function headersToAdd(m: HeaderModifier): Json[] {
  return [
    ...m.set.map((h) => ({
      header: { key: h.name, value: h.value },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    })),
    ...m.add.map((h) => ({
      header: { key: h.name, value: h.value },
      append_action: 'APPEND_IF_EXISTS_OR_ADD',
    })),
  ];
}

/** A backendRef's header modifiers, as its weighted_clusters entry takes them. */
function backendModifiers(t: IrTarget): Json {
  const out: Json = {};
  const req = t.requestHeaders;
  const res = t.responseHeaders;
  if (req && req.set.length + req.add.length > 0) out['request_headers_to_add'] = headersToAdd(req);
  if (req && req.remove.length > 0) out['request_headers_to_remove'] = [...req.remove];
  if (res && res.set.length + res.add.length > 0) out['response_headers_to_add'] = headersToAdd(res);
  if (res && res.remove.length > 0) out['response_headers_to_remove'] = [...res.remove];
  return out;
}

function modifiers(rule: IrRule, options: RouteOptions): Json {
  const out: Json = {};
  const req = rule.requestHeaders;
  const res = rule.responseHeaders;
  if (req && req.set.length + req.add.length > 0) out['request_headers_to_add'] = headersToAdd(req);
  // The router drops the pin after stateful_session has read it: no backend sees it.
  const remove = [...(req?.remove ?? []), ...(rule.session ? [PIN_HEADER] : [])];
  if (remove.length > 0) out['request_headers_to_remove'] = remove;
  const toAdd = res ? headersToAdd(res) : [];
  // Debug echoes the token natively: no route enters the VM for it.
  if (options.debug) {
    toAdd.push({
      header: { key: DEBUG_POLICY_HEADER, value: rule.token },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    });
  }
  if (toAdd.length > 0) out['response_headers_to_add'] = toAdd;
  if (res && res.remove.length > 0) out['response_headers_to_remove'] = [...res.remove];
  return out;
}

/**
 * Each `retry_on` text once: a few sets of conditions serve every route (ir/router-plan.ts), and
 * a text joined per route held 0.9 MiB of equal strings at 10,000 routes. Started over past
 * RETRY_ON_KEPT texts (gRPC reasons make more sets), so it never grows with the configuration.
 */
const RETRY_ON_TEXTS = new Map<string, string>();
const RETRY_ON_KEPT = 64;

function retryOnText(conditions: readonly string[]): string {
  const text = conditions.join(',');
  const kept = RETRY_ON_TEXTS.get(text);
  if (kept !== undefined) return kept;
  if (RETRY_ON_TEXTS.size >= RETRY_ON_KEPT) RETRY_ON_TEXTS.clear();
  RETRY_ON_TEXTS.set(text, text);
  return text;
}

/**
 * The `retry_policy` of one route: exactly the rule's plan for this class of methods;
 * none when the rule retries nothing and has no per-try timeout (Envoy then retries nothing).
 */
function retryPolicy(
  retry: RouterRetry,
  perTryTimeoutMs: number | undefined,
  session: boolean,
): Json | undefined {
  if (retry.retryOn.length === 0 && perTryTimeoutMs === undefined) return undefined;
  return sharedShape({
    ...(retry.retryOn.length > 0 ? { retry_on: retryOnText(retry.retryOn) } : {}),
    // Envoy's default is 1: say 0 where the rule asks for none.
    num_retries: retry.numRetries,
    ...(retry.codes.length > 0 ? { retriable_status_codes: [...retry.codes] } : {}),
    ...(perTryTimeoutMs !== undefined ? { per_try_timeout: durationMs(perTryTimeoutMs) } : {}),
    // A session's retry (its pinned backend failed) goes to a backend not yet tried.
    ...(session ? RETRY_OTHER_HOSTS : {}),
    retry_back_off: { ...RETRY_BACK_OFF },
  });
}

/**
 * RequestMirror as Envoy's shadowing: the router sends one copy per request (never per
 * retry), does not retry it, and drops its answer, so it cannot change the response or
 * the session the client gets.
 */
function mirrorPolicies(mirrors: IrForward['mirrors']): Json[] {
  return mirrors.map((m) => ({
    cluster: m.cluster,
    ...(m.perMillion < 1_000_000
      ? { runtime_fraction: { default_value: { numerator: m.perMillion, denominator: 'MILLION' } } }
      : {}),
  }));
}

function optional(key: string, value: Json | undefined): Json {
  return value === undefined ? {} : { [key]: value };
}

/** The per-filter configuration of a route that never runs the `reset` filter (a redirect, a direct answer). */
export function answeredByEnvoy(options: RouteOptions): Json {
  const perFilter = resetSwitch(false, options.resetDefault ?? 'off');
  return Object.keys(perFilter).length > 0 ? { typed_per_filter_config: perFilter } : {};
}

/** The Envoy routes of one entry (its own, and CORS's around it), in the order Envoy must try them. */
export function envoyRoutes(entry: IrEntry, options: RouteOptions = {}): Json[] {
  const routes = entryRoutes(entry, options);
  return entry.rule.cors
    ? corsRoutes(entry.rule.cors, entry.match, routes, answeredByEnvoy(options))
    : routes;
}

/** Where a forwarding rule sends: its one cluster, or the weighted split of its backends. */
function routeTarget(action: IrForward): Json {
  const usable = action.targets.filter((t) => t.weight > 0);
  // A backendRef's own headers live on its entry of weighted_clusters (its own cluster).
  const perBackend = usable.some((t) => t.requestHeaders || t.responseHeaders);
  return (action.targets.length === 1 && !perBackend) || usable.length === 0
    ? { cluster: action.targets[0]?.cluster }
    : {
        weighted_clusters: {
          clusters: usable.map((t) => ({ name: t.cluster, weight: t.weight, ...backendModifiers(t) })),
        },
      };
}

/** The `route` of one Envoy route of a forwarding rule, with the retries of its methods. */
function forwardAction(entry: IrEntry, action: IrForward, target: Json, retry: RouterRetry): Json {
  const { rule, match } = entry;
  return sharedShape({
    ...target,
    // The router rewrites once, before the first attempt: every retry sends the same request.
    ...(action.rewrite ? rewriteFields(action.rewrite, match) : {}),
    ...(action.mirrors.length > 0 ? { request_mirror_policies: mirrorPolicies(action.mirrors) } : {}),
    ...(action.unresolved ? { cluster_not_found_response_code: 'INTERNAL_SERVER_ERROR' } : {}),
    ...(action.timeoutMs !== undefined ? { timeout: durationMs(action.timeoutMs) } : {}),
    ...optional('retry_policy', retryPolicy(retry, rule.plan.perTryTimeoutMs, rule.session)),
    ...(action.websocket ? { upgrade_configs: [{ upgrade_type: 'websocket' }] } : {}),
    ...(action.grpc ? { max_stream_duration: { grpc_timeout_header_max: '0s' } } : {}),
  });
}

function entryRoutes(entry: IrEntry, options: RouteOptions): Json[] {
  const { rule, match } = entry;
  const base: Json = { name: match.id, match: routeMatch(match) };
  const action = rule.action;
  if (action.type === 'redirect') {
    // Answered by the router itself: no backend, no retry, no session, no filter.
    return redirectRoutes(action.redirect, match, options.listener ?? DEFAULT_LISTENER).map((r) => ({
      ...base,
      ...(r.headers.length > 0
        ? { name: `${match.id}/host-port`, match: withMatchHeaders(base['match'] as Json, r.headers) }
        : {}),
      redirect: r.redirect,
      ...answeredByEnvoy(options),
      ...modifiers(rule, options),
    }));
  }
  if (action.type === 'direct-response') {
    return [
      {
        ...base,
        direct_response: { status: action.status },
        ...answeredByEnvoy(options),
        ...modifiers(rule, options),
      },
    ];
  }
  const { route } = entry;
  // Only a session rule runs the filter and stateful_session, and only the filter reads the
  // policy token: its downstream half on a session route, its upstream half on a retry. Only
  // a route with a retry policy may add `reset` for the idempotent methods (ir/rule-action.ts).
  const perFilter: Json = {
    ...(rule.session ? sessionRouteFilters() : {}),
    ...resetSwitch(route.resetByMethod, options.resetDefault ?? 'off'),
  };
  return [
    sharedShape({
      ...base,
      route: forwardAction(entry, action, routeTarget(action), route.retry),
      ...(rule.tokenOnRoute
        ? { metadata: { filter_metadata: { [METADATA_NAMESPACE]: { [METADATA_POLICY_KEY]: rule.token } } } }
        : {}),
      ...(Object.keys(perFilter).length > 0 ? { typed_per_filter_config: perFilter } : {}),
      ...modifiers(rule, options),
    }),
  ];
}
