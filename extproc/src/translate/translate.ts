// The validated model → status for every object + the PolicyTable. Pure: data in, data out.
import { ConditionType as T, Reason } from '../gatewayapi/codes.js';
import { formatFieldPath, hasSource } from '../gatewayapi/diagnostic.js';
import type { FieldError } from '../gatewayapi/fields.js';
import type { AnyObject, EndpointSlice, Model, Namespace, Route, RouteRule } from '../gatewayapi/model.js';
import type { ValidateResult } from '../gatewayapi/validate.js';
import {
  POLICY_TABLE_VERSION,
  type PolicyTable,
  type TableBackend,
  type TableListener,
  type TableRoute,
  type TableRule,
} from '../policy/policy-table.js';
import { encodePolicyToken } from '../policy/policy-token.js';
import { matchRe2Problem } from '../policy/re2-syntax.js';
import { type Attachment, attachRoute } from './attach.js';
import { type BackendPathFilters, backendPathFilters } from './backend-path-filters.js';
import { type BackendContext, resolveBackend, routeClientCertificate } from './backends.js';
import {
  type GatewayState,
  type ListenerState,
  classStatus,
  evaluateGateways,
  gatewayStatus,
} from './gateways.js';
import { type KeptRoute, type RouteReach, contextOf, listenersOf } from './kept-routes.js';
import { KindConflicts } from './kind-conflicts.js';
import { RouteRun } from './route-run.js';
import type { CertificateMaterial, TlsMaterial } from '../policy/tls-material.js';
import { grpcMatch, httpMatch } from './matches.js';
import { type PolicyResult, type SessionSource, evaluatePolicies, policyAncestors } from './policies.js';
import { sortedOlderFirst } from './precedence.js';
import { rulePolicy } from './rule-policy.js';
import type { TranslateMemo } from './translate-memo.js';
import { exact, flatId, mapped, sharedShape } from '../json.js';
import {
  CONTROLLER_NAME,
  type Condition,
  type ObjectStatus,
  type ObjectStatusBody,
  type ObjectWarning,
  type RouteParentStatus,
  condition,
} from './status.js';

/** Route filters steadfast carries into the table; any other type fails the rule closed. */
const SUPPORTED_FILTERS = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
  'RequestMirror',
  'CORS',
] as const;

export interface Translation {
  readonly table: PolicyTable;
  /** Key pairs of the HTTPS listeners' certificates: kept out of the table, which the admin API serves. */
  readonly tls: TlsMaterial;
  /** One entry per decoded object, in input order. */
  readonly statuses: readonly ObjectStatus[];
}

function isRuleError(e: FieldError): boolean {
  return e.path[0] === 'spec' && e.path[1] === 'rules' && typeof e.path[2] === 'number';
}

function ruleErrorsOf(route: Route, index: number): FieldError[] {
  return route.errors.filter((e) => isRuleError(e) && e.path[2] === index);
}

function sessionFor(
  route: Route,
  rule: RouteRule,
  policies: PolicyResult,
  ctx: BackendContext,
): SessionSource | undefined {
  // Inline rule configuration beats policies; a rule section beats its route; a route beats a Service.
  if (rule.session) return { spec: rule.session, from: 'rule' };
  const routeKey = `${route.kind}/${route.namespace}/${route.name}`;
  const fromRule =
    rule.name !== undefined ? policies.sessions.get(`rule/${routeKey}/${rule.name}`) : undefined;
  if (fromRule) return fromRule;
  const fromRoute = policies.sessions.get(`route/${routeKey}`);
  if (fromRoute) return fromRoute;
  for (const ref of rule.backendRefs) {
    const key = `${ref.namespace}/${ref.name}`;
    const portName = ctx.services.get(key)?.ports.find((p) => p.port === ref.port)?.name;
    const s =
      (portName ? policies.sessions.get(`service/${key}/${portName}`) : undefined) ??
      policies.sessions.get(`service/${key}`);
    if (s) return s;
  }
  return undefined;
}

/**
 * Why a rule fails closed, in order: its schema errors, unsupported filters, its backendRefs'
 * path filters, then its backends; undefined when it serves.
 */
function ruleInvalid(
  route: Route,
  rule: RouteRule,
  backends: readonly TableBackend[],
  redirect: boolean,
  session: boolean,
  backendPaths: BackendPathFilters,
): TableRule['invalid'] {
  const errors = ruleErrorsOf(route, rule.index);
  const unsupported = rule.filters.filter((f) => !(SUPPORTED_FILTERS as readonly string[]).includes(f.type));
  if (errors.length > 0) {
    const e = errors[0] as FieldError;
    return { reason: Reason.UnsupportedValue, message: `${formatFieldPath(e.path)}: ${e.message}` };
  }
  if (unsupported.length > 0) {
    return {
      reason: Reason.UnsupportedValue,
      message: `filter type ${unsupported.map((f) => f.type).join(', ')} is not supported (steadfast supports ${SUPPORTED_FILTERS.join(', ')})`,
    };
  }
  if (backendPaths.invalid) return backendPaths.invalid;
  if (redirect && rule.filters.some((f) => f.mirror)) {
    // Envoy mirrors only what a route forwards; Gateway API asks to say so rather than drop the mirror.
    return {
      reason: Reason.IncompatibleFilters,
      message:
        'RequestRedirect and RequestMirror cannot be combined in steadfast: a redirect is answered by the gateway and never forwarded, so there is no request to mirror',
    };
  }
  // A redirect answers at the gateway: the backends are never asked.
  if (redirect) return undefined;
  if (backends.length === 0)
    return { reason: Reason.BackendNotFound, message: 'the rule has no backendRefs' };
  if (backends.every((b) => b.invalid)) {
    const b = backends[0];
    return {
      reason: b?.invalid?.reason ?? Reason.BackendNotFound,
      message: `no backendRef resolves: ${b?.invalid?.message ?? ''}`,
    };
  }
  if (
    session &&
    backends.length > 1 &&
    backends.some((b) => b.requestHeaders !== undefined || b.responseHeaders !== undefined)
  ) {
    // Per-backend headers need a cluster per backend; a session pins within one cluster only.
    return {
      reason: Reason.UnsupportedValue,
      message:
        'session persistence across several backendRefs cannot be combined with backendRef filters in steadfast (each such backend needs its own Envoy cluster, and a session pins within one)',
    };
  }
  return undefined;
}

/** The rule's mirrors; one whose backend does not resolve stays marked invalid, never configured. */
function ruleMirrors(
  route: Route,
  rule: RouteRule,
  ctx: BackendContext,
  clientCertificate: string | undefined,
): NonNullable<TableRule['mirrors']> {
  return rule.filters.flatMap((f) =>
    f.mirror
      ? [
          {
            backend: resolveBackend(route, f.mirror.backendRef, ctx, clientCertificate),
            perMillion: f.mirror.perMillion,
          },
        ]
      : [],
  );
}

/** The rule's policy token; one that cannot be encoded yields a bare token and why. */
function ruleToken(
  policy: TableRule['policy'],
  id: string,
  kind: 'grpc' | 'http',
): { token: string; error?: string } {
  try {
    return { token: encodePolicyToken(policy) };
  } catch (e) {
    return { token: encodePolicyToken({ rule: id, kind }), error: (e as Error).message };
  }
}

function translateRule(
  route: Route,
  rule: RouteRule,
  policies: PolicyResult,
  ctx: BackendContext,
  clientCertificate: string | undefined,
): TableRule {
  const kind = route.kind === 'GRPCRoute' ? 'grpc' : 'http';
  const id = flatId(route.kind.toLowerCase(), route.namespace, route.name, 'rule', rule.index);
  const matches =
    kind === 'grpc'
      ? rule.grpcMatches.map((m) => grpcMatch(id, m))
      : rule.httpMatches.map((m) => httpMatch(id, m));
  const backends = rule.backendRefs.map((ref) => resolveBackend(route, ref, ctx, clientCertificate));
  const backendPaths = backendPathFilters(rule);
  const redirect = rule.filters.find((f) => f.redirect)?.redirect ?? backendPaths.redirect;
  // A redirect is answered by the gateway: nothing to retry, time out or pin, no cookie to set.
  const session = redirect ? undefined : sessionFor(route, rule, policies, ctx);
  const policy = redirect
    ? rulePolicy(id, kind, undefined, undefined, undefined)
    : rulePolicy(id, kind, rule.retry, rule.timeouts, session?.spec);
  const rewrite = rule.filters.find((f) => f.rewrite)?.rewrite ?? backendPaths.rewrite;
  const cors = rule.filters.find((f) => f.cors)?.cors;
  // "If the referent cannot be found, this BackendRef is invalid and must be dropped".
  const mirrors = ruleMirrors(route, rule, ctx, clientCertificate);
  let invalid = ruleInvalid(
    route,
    rule,
    backends,
    redirect !== undefined,
    session !== undefined,
    backendPaths,
  );
  const { token, error } = ruleToken(policy, id, kind);
  if (error !== undefined) invalid ??= { reason: Reason.UnsupportedValue, message: error };
  const header = (type: string) => rule.filters.find((f) => f.type === type)?.headers;
  const requestHeaders = header('RequestHeaderModifier');
  const responseHeaders = header('ResponseHeaderModifier');
  return {
    id,
    index: rule.index,
    ...(rule.name !== undefined ? { name: rule.name } : {}),
    matches,
    backends,
    ...(requestHeaders ? { requestHeaders } : {}),
    ...(responseHeaders ? { responseHeaders } : {}),
    ...(redirect ? { redirect } : {}),
    ...(rewrite ? { rewrite } : {}),
    ...(mirrors.length > 0 ? { mirrors } : {}),
    ...(cors ? { cors } : {}),
    policy,
    ...(session ? { sessionFrom: session.from } : {}),
    token,
    ...(invalid ? { invalid } : {}),
  };
}

/**
 * PartiallyInvalid when Envoy cannot take some of the route's matches (a regular expression
 * RE2 cannot compile): gateway mode leaves them out of Envoy's routes. The upstream rule:
 * Accepted stays True, and the message starts with "Dropped Rule".
 */
function partiallyInvalid(route: Route, rules: readonly TableRule[]): Condition[] {
  const dropped = rules.flatMap((r) => r.matches.map(matchRe2Problem).filter((p) => p !== undefined));
  if (dropped.length === 0) return [];
  return [
    condition(
      T.PartiallyInvalid,
      'True',
      Reason.UnsupportedValue,
      `Dropped Rule matches from Envoy's routes in gateway mode (attach mode still matches them): ${dropped.join('; ')}`,
      route.generation,
    ),
  ];
}

/**
 * The parent conditions of an attached route: Accepted (False when a rule fails closed),
 * ResolvedRefs, and PartiallyInvalid when Envoy cannot take some matches.
 */
function routeConditions(route: Route, rules: readonly TableRule[]): Condition[] {
  const gen = route.generation;
  const configInvalid = rules.filter(
    (r) => r.invalid?.reason === Reason.UnsupportedValue || r.invalid?.reason === Reason.IncompatibleFilters,
  );
  const accepted =
    configInvalid.length > 0
      ? condition(
          T.Accepted,
          'False',
          // The first failing rule's reason: UnsupportedValue, or IncompatibleFilters.
          configInvalid[0]?.invalid?.reason === Reason.IncompatibleFilters
            ? Reason.IncompatibleFilters
            : Reason.UnsupportedValue,
          configInvalid
            .map((r) => `rules[${r.index}] fails closed (answers 500): ${r.invalid?.message ?? ''}`)
            .join('; '),
          gen,
        )
      : condition(T.Accepted, 'True', Reason.Accepted, 'accepted', gen);
  return [accepted, resolvedRefs(route, rules), ...partiallyInvalid(route, rules)];
}

/** ResolvedRefs for every parent, attached or not: upstream reports it for each parentRef. */
function resolvedRefs(route: Route, rules: readonly TableRule[]): Condition {
  const gen = route.generation;
  const broken = rules.flatMap((r) =>
    [...r.backends, ...(r.mirrors ?? []).map((m) => m.backend)]
      .filter((b) => b.invalid && b.invalid.reason !== Reason.UnsupportedValue)
      .map((b) => ({ rule: r.index, b })),
  );
  const first = broken[0];
  return first
    ? condition(
        T.ResolvedRefs,
        'False',
        first.b.invalid?.reason as typeof Reason.BackendNotFound,
        broken.map((x) => `rules[${x.rule}] ${x.b.id}: ${x.b.invalid?.message ?? ''}`).join('; '),
        gen,
      )
    : condition(T.ResolvedRefs, 'True', Reason.ResolvedRefs, 'all references resolved', gen);
}

function parentStatus(
  a: Attachment,
  attachedConditions: Condition[] | undefined,
  resolved?: Condition,
): RouteParentStatus {
  const p = a.parentRef;
  return {
    parentRef: {
      group: p.group,
      kind: p.kind,
      namespace: p.namespace,
      name: p.name,
      ...(p.sectionName !== undefined ? { sectionName: p.sectionName } : {}),
      ...(p.port !== undefined ? { port: p.port } : {}),
    },
    controllerName: CONTROLLER_NAME,
    conditions:
      a.accepted.status === 'True' && attachedConditions
        ? attachedConditions
        : [a.accepted, ...(resolved ? [resolved] : [])],
  };
}

/**
 * The model → the table and every object's status, as a list of named steps: the Gateways and
 * their listeners, the policies, the backends' indexes, the routes (attachment, rules,
 * status, which policy targets each Gateway reaches), the table's listeners, then status.
 */
export function translate(input: ValidateResult, memo?: TranslateMemo): Translation {
  const { model } = input;
  const certificates: Record<string, CertificateMaterial> = {};
  const gateways = evaluateGateways(model, certificates);
  const policies = evaluatePolicies(model);
  const ctx = backendContext(model, policies, gateways);
  memo?.begin(model, contextOf(model), policyAnswers(policies, ctx));
  const routes = translateRoutes(model, gateways, policies, ctx, memo);
  memo?.end(routes.table);
  const listeners = tableListeners(gateways);
  const statuses = objectStatuses(input.objects, gateways, routes, policies, memo);
  return {
    table: { version: POLICY_TABLE_VERSION, listeners, routes: routes.table },
    tls: { certificates },
    statuses,
  };
}

/** What the policies (and the Gateways' backend client certificates) answer rules, as JSON: routes that come and go can change it. */
function policyAnswers(p: PolicyResult, ctx: BackendContext): string {
  return JSON.stringify([
    [...p.backendTls],
    [...p.retryConstraints],
    [...p.sessions],
    [...ctx.clientCertificates],
  ]);
}

/** What resolving a backendRef needs: Services and their EndpointSlices by `<ns>/<name>`, grants, policies. */
function backendContext(
  model: Model,
  policies: PolicyResult,
  gateways: ReadonlyMap<string, GatewayState>,
): BackendContext {
  const slices = new Map<string, EndpointSlice[]>();
  for (const s of model.endpointSlices) {
    if (s.serviceName === undefined) continue;
    const key = `${s.namespace}/${s.serviceName}`;
    slices.set(key, [...(slices.get(key) ?? []), s]);
  }
  return {
    services: new Map(model.services.map((s) => [`${s.namespace}/${s.name}`, s])),
    slices,
    referenceGrants: model.referenceGrants,
    backendTls: policies.backendTls,
    retryConstraints: policies.retryConstraints,
    clientCertificates: new Map(
      [...gateways].flatMap(([key, g]) =>
        g.backendClientCertificate !== undefined ? [[key, g.backendClientCertificate] as const] : [],
      ),
    ),
  };
}

/** Policy target key → the Gateways (`<ns>/<name>`) that reach it through an attached route. */
type Reach = Map<string, Set<string>>;

interface TranslatedRoutes {
  /** The attached routes, oldest first. */
  readonly table: TableRoute[];
  readonly status: ReadonlyMap<Route, ObjectStatusBody>;
  readonly warnings: ReadonlyMap<Route, readonly ObjectWarning[]>;
  readonly reach: Reach;
  /** The walk was taken up from the last one (route-run.ts): each route made what it made then. */
  readonly resumed: boolean;
}

/** What translating one route reads besides the route, shared by every route of a translation. */
interface RouteWorld {
  readonly gateways: ReadonlyMap<string, GatewayState>;
  readonly namespaces: ReadonlyMap<string, Namespace>;
  readonly conflicts: KindConflicts;
  readonly policies: PolicyResult;
  readonly ctx: BackendContext;
  readonly memo: TranslateMemo | undefined;
  /** Every Gateway listener (listenersOf), and each one's position there. */
  readonly positions: ReadonlyMap<ListenerState, number>;
}

/**
 * Every route, oldest first (a conflict goes to the older one): attached, translated, and its
 * status; a route the memo kept whole (translate/kept-routes.ts) as it was made last time, and
 * the walk taken up from the last one while what was kept holds (translate/route-run.ts).
 */
function translateRoutes(
  model: Model,
  gateways: ReadonlyMap<string, GatewayState>,
  policies: PolicyResult,
  ctx: BackendContext,
  memo: TranslateMemo | undefined,
): TranslatedRoutes {
  const listeners = listenersOf(gateways);
  const world: RouteWorld = {
    gateways,
    namespaces: new Map(model.namespaces.map((n) => [n.name, n])),
    conflicts: new KindConflicts(),
    policies,
    ctx,
    memo,
    positions: new Map(listeners.map((l, i) => [l, i])),
  };
  const make = (route: Route): KeptRoute => {
    let made = memo?.kept.get(route);
    if (!made) {
      made = translateRoute(route, world);
      memo?.kept.set(route, made);
    }
    return made;
  };
  const order = memo ? memo.order.sorted(model.routes) : sortedOlderFirst(model.routes);
  const walk = (memo?.run ?? new RouteRun()).walk(
    order,
    listeners.length,
    memo?.kept.continued ?? false,
    make,
  );
  memo?.kept.taken(walk.reused);
  walk.attached.forEach((n, at) => ((listeners[at] as ListenerState).attachedRoutes += n));
  const reach: Reach = new Map();
  // Only policies' status reads what routes reach (and routes record it only then).
  if (policies.targets.size > 0)
    for (const made of walk.made) if (made.reached) recordReach(reach, made.reached);
  return { table: walk.table, status: walk.status, warnings: walk.warnings, reach, resumed: walk.resumed };
}

/** One route attached (its conflicts settled with the older ones), translated, and its status. */
function translateRoute(route: Route, world: RouteWorld): KeptRoute {
  const { policies, ctx, memo } = world;
  const routeLevel = route.errors.filter((e) => !isRuleError(e));
  if (routeLevel.length > 0) {
    const status = rejectedRouteStatus(route, routeLevel[0] as FieldError);
    return { entry: undefined, attachedTo: [], status, warnings: undefined };
  }
  const attachments = world.conflicts.settle(route, attachRoute(route, world.gateways, world.namespaces));
  const attached = attachments.flatMap((a) => a.listeners);
  const clientCertificate = routeClientCertificate(acceptedOn(attachments), ctx.clientCertificates);
  const rules = route.rules.map((r) =>
    memo
      ? memo.rule(r, ctx, clientCertificate, () => translateRule(route, r, policies, ctx, clientCertificate))
      : translateRule(route, r, policies, ctx, clientCertificate),
  );
  // What the route's status says of its rules: the same while the route and its rules are.
  const outcome = memo
    ? memo.outcome(route, rules, () => routeOutcome(route, rules))
    : routeOutcome(route, rules);
  const isAttached = attached.length > 0;
  // Attached to listeners that are valid but cannot serve (no usable certificate): counted, not served.
  const served = attached.filter((l) => l.state.usable);
  const entry =
    served.length === 0
      ? undefined
      : memo
        ? memo.tableRoute(route, served, rules, tableRoute)
        : tableRoute(route, served, rules);
  // Only policies' status reads what routes reach.
  const reached = isAttached && policies.targets.size > 0 ? reachOf(route, attachments, ctx) : undefined;
  const conditions = isAttached ? outcome.conditions : undefined;
  const body = (): ObjectStatusBody => ({
    parents: attachments.map((a) => parentStatus(a, conditions, outcome.resolved)),
  });
  return {
    entry,
    attachedTo: [...new Set(attached.map((x) => world.positions.get(x.state) as number))],
    status: memo ? memo.routeStatus(route, attachments, outcome, isAttached, body) : body(),
    warnings: isAttached ? outcome.warnings : undefined,
    ...(reached ? { reached } : {}),
  };
}

/** A route's table entry: the listeners that serve it and the hostnames it has on them. */
function tableRoute(route: Route, served: Attachment['listeners'], rules: readonly TableRule[]): TableRoute {
  return {
    id: flatId(route.kind.toLowerCase(), route.namespace, route.name),
    kind: route.kind === 'GRPCRoute' ? 'grpc' : 'http',
    namespace: route.namespace,
    name: route.name,
    ...(route.creationTimestamp !== undefined ? { creationTimestamp: route.creationTimestamp } : {}),
    listeners: [...new Set(served.map((l) => l.state.id))],
    hostnames: [...new Set(served.flatMap((l) => l.hostnames))],
    rules,
  };
}

/** What a route's status says of its rules: a function of the route and its rules alone. */
interface RouteOutcome {
  /** The parent conditions where the route is attached. */
  readonly conditions: Condition[];
  /** Its warnings, where it is attached. */
  readonly warnings: readonly ObjectWarning[];
  /** ResolvedRefs, for every parent. */
  readonly resolved: Condition;
}

function routeOutcome(route: Route, rules: readonly TableRule[]): RouteOutcome {
  return {
    conditions: routeConditions(route, rules),
    warnings: exact([...noReadyEndpoints(route, rules), ...underscoreSessionHeaders(route, rules)]),
    resolved: resolvedRefs(route, rules),
  };
}

/** A route with a route-level error attaches nowhere: Accepted=False on every parentRef. */
function rejectedRouteStatus(route: Route, e: FieldError): ObjectStatusBody {
  const c = condition(
    T.Accepted,
    'False',
    Reason.UnsupportedValue,
    `${formatFieldPath(e.path)}: ${e.message}`,
    route.generation,
  );
  return {
    parents: route.parentRefs.map((p) =>
      parentStatus({ parentRef: p, accepted: c, listeners: [] }, undefined),
    ),
  };
}

/** The Gateways (`<ns>/<name>`) the route attached to, each once. */
function acceptedOn(attachments: readonly Attachment[]): string[] {
  return [
    ...new Set(
      attachments
        .filter((a) => a.listeners.length > 0)
        .map((a) => `${a.parentRef.namespace}/${a.parentRef.name}`),
    ),
  ];
}

/** The policy targets an attached route makes reachable (itself, its named rules, its Services) from its Gateways. */
function reachOf(route: Route, attachments: readonly Attachment[], ctx: BackendContext): RouteReach {
  const keys: string[] = [];
  const routeKey = `${route.kind}/${route.namespace}/${route.name}`;
  keys.push(`route/${routeKey}`);
  for (const rule of route.rules) {
    if (rule.name !== undefined) keys.push(`rule/${routeKey}/${rule.name}`);
    for (const ref of rule.backendRefs) {
      if (ref.group !== '' || ref.kind !== 'Service') continue;
      const svc = `${ref.namespace}/${ref.name}`;
      keys.push(`service/${svc}`);
      const portName = ctx.services.get(svc)?.ports.find((p) => p.port === ref.port)?.name;
      if (portName) keys.push(`service/${svc}/${portName}`);
    }
  }
  return { gateways: acceptedOn(attachments), keys };
}

/** Records what one route reaches. */
function recordReach(reach: Reach, reached: RouteReach): void {
  for (const key of reached.keys) {
    const set = reach.get(key) ?? new Set<string>();
    for (const g of reached.gateways) set.add(g);
    reach.set(key, set);
  }
}

/** The table's listeners: every usable Gateway listener, with its certificates on HTTPS. */
function tableListeners(gateways: ReadonlyMap<string, GatewayState>): TableListener[] {
  const listeners: TableListener[] = [];
  for (const g of gateways.values()) {
    for (const l of g.listeners) {
      if (!l.usable) continue;
      listeners.push({
        id: l.id,
        gateway: `${g.gateway.namespace}/${g.gateway.name}`,
        name: l.listener.name,
        port: l.listener.port,
        ...(l.listener.hostname !== undefined ? { hostname: l.listener.hostname } : {}),
        protocol: l.listener.protocol,
        ...(l.listener.protocol === 'HTTPS' ? { tls: listenerTls(l) } : {}),
      });
    }
  }
  return listeners;
}

function listenerTls(l: ListenerState): NonNullable<TableListener['tls']> {
  return {
    certificates: l.certificates,
    ...(l.clientValidation ? { clientValidation: l.clientValidation } : {}),
  };
}

/** Every decoded object's status, in input order; routes carry their warnings. */
function objectStatuses(
  objects: readonly AnyObject[],
  gateways: ReadonlyMap<string, GatewayState>,
  routes: TranslatedRoutes,
  policies: PolicyResult,
  memo: TranslateMemo | undefined,
): ObjectStatus[] {
  const one = (o: AnyObject): ObjectStatus => {
    const body = statusBody(o, gateways, routes.status, policies, routes.reach);
    const warnings = routes.warnings.get(o as Route);
    const make = (): ObjectStatus => {
      const status = objectStatus(o, body);
      return warnings && warnings.length > 0 ? { ...status, warnings } : status;
    };
    return memo ? memo.objectStatus(o, body, warnings, make) : make();
  };
  return memo ? memo.statusesOf(objects, routes.resumed, one) : objects.map(one);
}

/**
 * A backendRef that resolves to a Service without a ready endpoint is valid (ResolvedRefs
 * stays True), but every request sent there is answered 503: say so. Weight 0 gets no traffic.
 */
function noReadyEndpoints(route: Route, rules: readonly TableRule[]): ObjectWarning[] {
  const out: ObjectWarning[] = [];
  for (const rule of rules) {
    // A redirect (a backendRef's too) sends nothing to its backends.
    if (rule.invalid || rule.redirect) continue;
    rule.backends.forEach((b, j) => {
      if (b.invalid || b.weight === 0 || b.endpoints.some((e) => e.ready)) return;
      const path = ['spec', 'rules', rule.index, 'backendRefs', j];
      out.push({
        field: formatFieldPath(path),
        line: route.origin.lineOf(path),
        code: 'no-ready-endpoints',
        message:
          `Service ${b.namespace}/${b.service} port ${b.port} has ` +
          `${b.endpoints.length === 0 ? 'no endpoints' : 'no ready endpoints'}: ` +
          'requests sent to this backend are answered 503',
      });
    });
  }
  return out;
}

/**
 * A Header session whose name has a `_`: gateway mode drops request headers with underscores
 * (an edge default, docs/hardening.md), so the token a client sends back never arrives and
 * every request starts a new session. Valid Gateway API, and attach mode depends on the
 * operator's Envoy: a warning, not a refusal.
 */
function underscoreSessionHeaders(route: Route, rules: readonly TableRule[]): ObjectWarning[] {
  const out: ObjectWarning[] = [];
  for (const rule of rules) {
    const session = rule.policy.session;
    if (rule.invalid || session?.type !== 'header' || !session.name.includes('_')) continue;
    const path =
      rule.sessionFrom === 'rule'
        ? ['spec', 'rules', rule.index, 'sessionPersistence']
        : ['spec', 'rules', rule.index];
    out.push({
      field: formatFieldPath(path),
      line: route.origin.lineOf(path),
      code: 'underscore-session-header',
      message:
        `the session header ${session.name}` +
        (rule.sessionFrom !== undefined && rule.sessionFrom !== 'rule' ? ` (from ${rule.sessionFrom})` : '') +
        ' has a "_": gateway mode drops request headers with underscores, so clients cannot send ' +
        'the session back and every request starts a new session; use "-" instead',
    });
  }
  return out;
}

/** What the object's `status` says: its kind's conditions (a route's were made with the route). */
function statusBody(
  o: AnyObject,
  gateways: ReadonlyMap<string, GatewayState>,
  routeStatus: ReadonlyMap<Route, ObjectStatusBody>,
  policies: PolicyResult,
  reach: ReadonlyMap<string, ReadonlySet<string>>,
): ObjectStatusBody {
  switch (o.kind) {
    case 'GatewayClass':
      return classStatus(o);
    case 'Gateway': {
      const g = gateways.get(`${o.namespace}/${o.name}`);
      return g ? gatewayStatus(g) : {};
    }
    case 'HTTPRoute':
    case 'GRPCRoute':
      return routeStatus.get(o) ?? {};
    case 'BackendTLSPolicy':
    case 'XBackendTrafficPolicy':
    case 'SessionPersistencePolicy':
      return {
        ancestors: policyAncestors(policies.targets.get(`${o.kind}/${o.namespace}/${o.name}`) ?? [], reach),
      };
    default:
      return {};
  }
}

/** The object's status: who it is, where it was read, its errors, and `status`. */
function objectStatus(o: AnyObject, status: ObjectStatusBody): ObjectStatus {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: sharedShape({ ...(o.namespace !== '' ? { namespace: o.namespace } : {}), name: o.name }),
    ...(hasSource(o.origin.source)
      ? { source: { file: o.origin.source.file, line: o.origin.source.line } }
      : {}),
    errors: mapped(o.errors, (e) => ({
      field: formatFieldPath(e.path),
      line: o.origin.lineOf(e.path),
      code: e.code,
      message: e.message,
    })),
    status,
  };
}
