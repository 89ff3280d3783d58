// What one route rule does, decided once: answer a redirect, answer 500 (a rule that fails
// closed, or one with nothing to send to), or forward to its clusters with the router plan
// (router-plan.ts), timeout, mirrors and rewrite; and, for every match of it, its one Envoy
// route, with the retries of the match's methods (docs/retries.md). envoy/route-action.ts only
// spells these out.
import type { TableMatch, TableRule } from '../policy/policy-table.js';
import type { HeaderModifier, TableCors, TableRedirect, TableRewrite } from '../policy/route-filters.js';
import { IDEMPOTENT_METHODS, type RouterPlan, type RouterRetry } from './router-plan.js';
import type { RuleClusters } from './rule-clusters.js';
import type { SharedTargets } from './cluster-sharing.js';

export interface IrForward extends SharedTargets {
  readonly type: 'forward';
  /** Some targets name no cluster (unresolved backendRefs): their share answers 500. */
  readonly unresolved: boolean;
  /** A ws or wss backend: the route allows the WebSocket upgrade. */
  readonly websocket: boolean;
  readonly rewrite?: TableRewrite;
  /**
   * The whole exchange's timeout (ms): the rule's, else 0 (none) for WebSockets, which outlive
   * any request timeout, and for GRPCRoute, which has no timeouts (the client's grpc-timeout
   * bounds the call); undefined: Envoy's default.
   */
  readonly timeoutMs?: number;
  /** GRPCRoute: the client's grpc-timeout header bounds the stream. */
  readonly grpc: boolean;
}

export type IrAction =
  | { readonly type: 'redirect'; readonly redirect: TableRedirect }
  | { readonly type: 'direct-response'; readonly status: 500 }
  | IrForward;

export interface IrRule {
  readonly id: string;
  readonly plan: RouterPlan;
  readonly action: IrAction;
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
  /** Session rules run the filter and stateful_session. */
  readonly session: boolean;
  /** What reaches the filter (and what debug mode echoes). */
  readonly token: string;
  /**
   * The routes carry the token in their metadata, for the filter to read: a session rule's
   * (the downstream half, on every request) and a rule with a backoff floor's (the upstream
   * half, on a retry only). Every other route says nothing.
   */
  readonly tokenOnRoute: boolean;
  /** Only on a rule that does not fail closed: that one answers 500 to preflights too. */
  readonly cors?: TableCors;
  /** The rule's retries wait for a backoff floor: its virtual host counts attempts. */
  readonly countsAttempts: boolean;
}

/** The Envoy route of a match. */
export interface IrRoute {
  /** The match's id. */
  readonly name: string;
  /** The retries of this route's methods (the other methods' when it does not fix one). */
  readonly retry: RouterRetry;
  /**
   * The idempotent methods retry a reset too and the match does not fix its method: the route
   * switches on the filter that adds `reset` to an idempotent request's retry conditions.
   */
  readonly resetByMethod: boolean;
}

/** One match of a rule, with its route. */
export interface IrEntry {
  readonly match: TableMatch;
  readonly rule: IrRule;
  readonly route: IrRoute;
}

/** The rule's action, from its own clusters (undefined for a rule that fails closed) shared. */
export function ruleAction(
  rule: TableRule,
  plan: RouterPlan,
  clusters: RuleClusters | undefined,
  shared: SharedTargets | undefined,
): IrRule {
  const action = ((): IrAction => {
    if (rule.redirect && !rule.invalid) return { type: 'redirect', redirect: rule.redirect };
    if (rule.invalid || !clusters || !shared || shared.targets.length === 0) {
      return { type: 'direct-response', status: 500 };
    }
    const grpc = rule.policy.kind === 'grpc';
    const timeoutMs = plan.requestTimeoutMs ?? (clusters.websocket || grpc ? 0 : undefined);
    return {
      type: 'forward',
      targets: shared.targets,
      mirrors: shared.mirrors,
      unresolved: clusters.unresolved,
      websocket: clusters.websocket,
      ...(rule.rewrite ? { rewrite: rule.rewrite } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      grpc,
    };
  })();
  const session = rule.policy.session !== undefined;
  const countsAttempts = !rule.invalid && plan.backoffMs > 0;
  return {
    id: rule.id,
    plan,
    action,
    ...(rule.requestHeaders ? { requestHeaders: rule.requestHeaders } : {}),
    ...(rule.responseHeaders ? { responseHeaders: rule.responseHeaders } : {}),
    session,
    token: rule.token,
    ...(rule.cors && !rule.invalid ? { cors: rule.cors } : {}),
    tokenOnRoute: session || countsAttempts,
    countsAttempts,
  };
}

/** A match's entry: one route, with the retries of the methods it takes. */
export function ruleEntry(rule: IrRule, match: TableMatch): IrEntry {
  const { plan } = rule;
  const method = match.method;
  if (method !== undefined) {
    const retry = IDEMPOTENT_METHODS.includes(method) ? plan.idempotent : plan.other;
    return { match, rule, route: { name: match.id, retry, resetByMethod: false } };
  }
  const resetByMethod = rule.action.type === 'forward' && plan.resetByMethod;
  return { match, rule, route: { name: match.id, retry: plan.other, resetByMethod } };
}
