// The Envoy routes of one (rule, match): the rule's cluster (or weighted split), its retries
// and timeouts compiled into `retry_policy` and `timeout` (router-plan.ts), header modifiers,
// and — on session rules only — the filter and stateful_session switched on, with the policy
// token the filter reads in route metadata; CORS wraps them (cors-routes.ts). A rule that failed
// validation answers 500 (fail closed).
import type { HeaderModifier, TableMatch, TableRule } from '../table/policy-table.js';
import { DEBUG_POLICY_HEADER, METADATA_NAMESPACE, METADATA_POLICY_KEY, PIN_HEADER } from './envoy-names.js';
import { corsRoutes } from './cors-routes.js';
import { sessionRouteFilters } from './http-filters.js';
import { type ListenerContext, redirectRoutes, rewriteFields } from './path-filters.js';
import { RETRY_OTHER_HOSTS } from './retry-hosts.js';
import { durationMs, IDEMPOTENT_METHODS, routerPlan, type RouterRetry } from './router-plan.js';
import type { RuleClusters, RuleTarget } from './rule-clusters.js';
import { routeMatch, withMatchHeaders } from './route-match.js';
import type { Json } from '../json.js';

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
function backendModifiers(t: RuleTarget): Json {
  const out: Json = {};
  const req = t.requestHeaders;
  const res = t.responseHeaders;
  if (req && req.set.length + req.add.length > 0) out['request_headers_to_add'] = headersToAdd(req);
  if (req && req.remove.length > 0) out['request_headers_to_remove'] = [...req.remove];
  if (res && res.set.length + res.add.length > 0) out['response_headers_to_add'] = headersToAdd(res);
  if (res && res.remove.length > 0) out['response_headers_to_remove'] = [...res.remove];
  return out;
}

function modifiers(rule: TableRule, options: RouteOptions): Json {
  const out: Json = {};
  const req = rule.requestHeaders;
  const res = rule.responseHeaders;
  if (req && req.set.length + req.add.length > 0) out['request_headers_to_add'] = headersToAdd(req);
  // The router drops the pin after stateful_session has read it: no backend sees it.
  const remove = [...(req?.remove ?? []), ...(rule.policy.session ? [PIN_HEADER] : [])];
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
 * The `retry_policy` of one route: exactly the rule's plan for this class of methods;
 * none when the rule retries nothing and has no per-try timeout (Envoy then retries nothing).
 */
function retryPolicy(
  retry: RouterRetry,
  perTryTimeoutMs: number | undefined,
  session: boolean,
): Json | undefined {
  if (retry.retryOn.length === 0 && perTryTimeoutMs === undefined) return undefined;
  return {
    ...(retry.retryOn.length > 0 ? { retry_on: retry.retryOn.join(',') } : {}),
    // Envoy's default is 1: say 0 where the rule asks for none.
    num_retries: retry.numRetries,
    ...(retry.codes.length > 0 ? { retriable_status_codes: [...retry.codes] } : {}),
    ...(perTryTimeoutMs !== undefined ? { per_try_timeout: durationMs(perTryTimeoutMs) } : {}),
    // A session's retry (its pinned backend failed) goes to a backend not yet tried.
    ...(session ? RETRY_OTHER_HOSTS : {}),
    retry_back_off: { ...RETRY_BACK_OFF },
  };
}

/**
 * RequestMirror as Envoy's shadowing: the router sends one copy per request (never per
 * retry), does not retry it, and drops its answer, so it cannot change the response or
 * the session the client gets.
 */
function mirrorPolicies(mirrors: RuleClusters['mirrors']): Json[] {
  return mirrors.map((m) => ({
    cluster: m.name,
    ...(m.perMillion < 1_000_000
      ? { runtime_fraction: { default_value: { numerator: m.perMillion, denominator: 'MILLION' } } }
      : {}),
  }));
}

function optional(key: string, value: Json | undefined): Json {
  return value === undefined ? {} : { [key]: value };
}

/** A `:method` header matcher for the idempotent methods. */
const IDEMPOTENT_METHOD_MATCH: Json = {
  name: ':method',
  string_match: { safe_regex: { regex: `^(${IDEMPOTENT_METHODS.join('|')})$` } },
};

/** The match, narrowed to idempotent methods. */
function idempotentOnly(match: Json): Json {
  return withMatchHeaders(match, [IDEMPOTENT_METHOD_MATCH]);
}

/**
 * The Envoy routes of one (rule, match), in the order Envoy must try them: one route, or
 * where the rule's retries differ by method and the match does not fix the method, a route
 * for idempotent methods followed by one for the rest (docs/retries.md).
 */
export function envoyRoutes(
  rule: TableRule,
  match: TableMatch,
  clusters: RuleClusters | undefined,
  options: RouteOptions = {},
): Json[] {
  const routes = ruleRoutes(rule, match, clusters, options);
  // A rule that fails closed answers 500 to every request, preflights included.
  return rule.cors && !rule.invalid ? corsRoutes(rule.cors, match, routes) : routes;
}

function ruleRoutes(
  rule: TableRule,
  match: TableMatch,
  clusters: RuleClusters | undefined,
  options: RouteOptions,
): Json[] {
  const base: Json = { name: match.id, match: routeMatch(match) };
  if (rule.redirect && !rule.invalid) {
    // Answered by the router itself: no backend, no retry, no session, no filter.
    return redirectRoutes(rule.redirect, match, options.listener ?? DEFAULT_LISTENER).map((r) => ({
      ...base,
      ...(r.headers.length > 0
        ? { name: `${match.id}/host-port`, match: withMatchHeaders(base['match'] as Json, r.headers) }
        : {}),
      redirect: r.redirect,
      ...modifiers(rule, options),
    }));
  }
  if (rule.invalid || !clusters || clusters.targets.length === 0) {
    return [
      {
        ...base,
        direct_response: { status: 500 },
        ...modifiers(rule, options),
      },
    ];
  }
  const usable = clusters.targets.filter((t) => t.weight > 0);
  // A backendRef's own headers live on its entry of weighted_clusters (its own cluster).
  const perBackend = usable.some((t) => t.requestHeaders || t.responseHeaders);
  const target =
    (clusters.targets.length === 1 && !perBackend) || usable.length === 0
      ? { cluster: clusters.targets[0]?.name }
      : {
          weighted_clusters: {
            clusters: usable.map((t) => ({ name: t.name, weight: t.weight, ...backendModifiers(t) })),
          },
        };
  const plan = routerPlan(rule.policy);
  const session = rule.policy.session !== undefined;
  // A WebSocket lives longer than any request timeout; GRPCRoute has no timeouts, so streams
  // are not cut at Envoy's 15 s default and the client's grpc-timeout bounds the call.
  const unbounded = clusters.websocket || rule.policy.kind === 'grpc';
  const timeout =
    plan.requestTimeoutMs !== undefined ? durationMs(plan.requestTimeoutMs) : unbounded ? '0s' : undefined;
  const route = (retry: RouterRetry): Json => ({
    ...target,
    // The router rewrites once, before the first attempt: every retry sends the same request.
    ...(rule.rewrite ? rewriteFields(rule.rewrite, match) : {}),
    ...(clusters.mirrors.length > 0 ? { request_mirror_policies: mirrorPolicies(clusters.mirrors) } : {}),
    ...(clusters.unresolved ? { cluster_not_found_response_code: 'INTERNAL_SERVER_ERROR' } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    ...optional('retry_policy', retryPolicy(retry, plan.perTryTimeoutMs, session)),
    ...(clusters.websocket ? { upgrade_configs: [{ upgrade_type: 'websocket' }] } : {}),
    ...(rule.policy.kind === 'grpc' ? { max_stream_duration: { grpc_timeout_header_max: '0s' } } : {}),
  });
  // Only a session rule runs the filter and stateful_session, and only the filter reads the
  // policy token.
  const filters: Json = session
    ? {
        metadata: { filter_metadata: { [METADATA_NAMESPACE]: { [METADATA_POLICY_KEY]: rule.token } } },
        typed_per_filter_config: sessionRouteFilters(),
      }
    : {};
  const withMods = (r: Json): Json => ({ ...r, ...filters, ...modifiers(rule, options) });
  const method = match.method;
  if (!plan.splitByMethod || method !== undefined) {
    const idempotent = method !== undefined && IDEMPOTENT_METHODS.includes(method);
    return [withMods({ ...base, route: route(idempotent ? plan.idempotent : plan.other) })];
  }
  return [
    withMods({
      ...base,
      name: `${match.id}/idempotent`,
      match: idempotentOnly(base['match'] as Json),
      route: route(plan.idempotent),
    }),
    withMods({ ...base, route: route(plan.other) }),
  ];
}
