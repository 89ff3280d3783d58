// Attach mode's Envoy snippet (`steadfast envoy-config --mode attach`): what an operator
// adds to an Envoy they already run — three HTTP filters before their router, the upstream
// half of the filter inside their router, the pinning header made internal-only, the retry
// backoff for the routes the rules cover, and the cluster of the control service. YAML with
// comments, one top-level key per place it goes; docs/attach.md walks through it.
import { stringify } from 'yaml';
import type { TableMatch, TableRule } from '../policy/policy-table.js';
import {
  METADATA_NAMESPACE,
  PIN_HEADER,
  TYPE_FILTER_STATE_INPUT,
  TYPE_HTTP_PROTOCOL_OPTIONS,
} from './envoy-names.js';
import { REQUEST_LINE_HEADERS } from '../policy/headers-read.js';
import {
  pinRemovalFilter,
  routerFilter,
  skippedWhen,
  statefulSessionFilter,
  steadfastFilter,
} from './http-filters.js';
import { outlierDetection } from './outlier-detection.js';
import {
  ATTRIBUTE_DESTINATION_PORT,
  ATTRIBUTE_GATEWAY_PORT,
  GATEWAY_PORT_METADATA_KEY,
} from '../ir/listener-ports.js';
import { type GatewayIr, routePorts } from '../ir/gateway-ir.js';
import { UPSTREAM_IDLE_TIMEOUT } from './gateway-config.js';
import { RETRY_OTHER_HOSTS } from './retry-hosts.js';
import { RETRY_BACK_OFF } from './route-action.js';
import type { Json } from '../json.js';

const TYPE_EXT_PROC = 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor';
/** The cluster the snippet adds for the control service. */
const EXT_PROC_CLUSTER = 'steadfast_extproc';
/**
 * Envoy's ext_proc resets its side stream when a request ends unless this runtime feature
 * is on; Node's HTTP/2 server (nghttp2's rapid-reset guard: 1000 resets, then 33 a second)
 * then closes the ext_proc connection every ~1000 requests under load, and the requests in
 * flight on it go without policy. With it, Envoy half-closes and waits for our trailers.
 */
const EXT_PROC_GRACEFUL_CLOSE = 'envoy.reloadable_features.ext_proc_graceful_grpc_close';

/** Envoy's default (docs/architecture.md, Envoy fact 10), and small enough that an outage costs little latency. */
const EXT_PROC_MESSAGE_TIMEOUT = '0.2s';

export interface AttachSnippetOptions {
  /** Where the control service listens for ext_proc, `HOST:PORT` (`steadfast serve --ext-proc-address`). */
  readonly extProcAddress: string;
  /** Path of steadfast.wasm as Envoy sees it. */
  readonly wasmPath: string;
  /** Base64 session keys, the first seals and all open; absent: none (sessions cannot be sealed). */
  readonly sessionKeys?: readonly string[];
  /** Adds x-steadfast-policy to responses: for trying it out, never production. */
  readonly debug?: boolean;
  /**
   * Send ext_proc every request header, not only those the rules read: for configurations
   * whose header matches change more often than the snippet can be deployed.
   */
  readonly forwardAllHeaders?: boolean;
  /**
   * The answer cache (default on): a request whose answer this Envoy worker already has
   * skips ext_proc; false: every request asks the control service.
   */
  readonly answerCache?: boolean;
  /**
   * What the snippet recommends for the operator's clusters' idle backend connections, as
   * gateway mode sets on its own (GatewayConfigOptions.upstreamIdleTimeout; "0s": never closed).
   */
  readonly upstreamIdleTimeout?: string;
}

/**
 * Filter state the lookup instance of the filter sets when it knows the answer (the wasm
 * host prefixes `wasm.` to the name the filter uses); clients cannot set filter state.
 */
const CACHED_ANSWER_FILTER_STATE = 'wasm.steadfast_answer';

/** `HOST:PORT` or `[v6]:PORT` → its parts; throws on anything else. */
export function parseHostPort(address: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535) {
    throw new Error(`ext_proc address "${address}" is not HOST:PORT with a port in 1-65535`);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The wasm filter's JSON configuration in attach mode: policy from ext_proc metadata. */
function attachFilterConfiguration(options: AttachSnippetOptions): string {
  return JSON.stringify({
    policySource: 'metadata',
    sessionKeys: [...(options.sessionKeys ?? [])],
    ...(options.answerCache !== false ? { answerCache: true } : {}),
    ...(options.debug ? { debug: true } : {}),
  });
}

/** The lookup instance's configuration: it only reads the VM's answer cache. */
const LOOKUP_FILTER_CONFIGURATION = JSON.stringify({ role: 'lookup' });

/**
 * ext_proc, skipped (match_delegate's SkipFilter) when the lookup instance handed on a
 * known answer: every value it sets starts with `sf` (a policy token, or `sf0` for none).
 */
function skippedWhenAnswered(extProc: Json): Json {
  return skippedWhen(
    extProc,
    {
      name: 'steadfast-answer',
      typed_config: { '@type': TYPE_FILTER_STATE_INPUT, key: CACHED_ANSWER_FILTER_STATE },
    },
    { prefix: 'sf' },
  );
}

/**
 * ext_proc's `forward_rules`: only the request line and the headers the rules match on
 * reach the control service (ext_proc.proto: "only headers in the allowed_headers are
 * forwarded") — less for Envoy to serialize and for the service to read, and no cookie or
 * credential leaves Envoy that no rule needs.
 */
export function extProcForwardRules(ir: GatewayIr): Json {
  const names = [...REQUEST_LINE_HEADERS, ...ir.headersRead];
  return { allowed_headers: { patterns: names.map((exact) => ({ exact })) } };
}

function attachHttpFilters(ir: GatewayIr, options: AttachSnippetOptions): Json[] {
  const extProc: Json = {
    name: 'envoy.filters.http.ext_proc',
    typed_config: {
      '@type': TYPE_EXT_PROC,
      grpc_service: { envoy_grpc: { cluster_name: EXT_PROC_CLUSTER } },
      failure_mode_allow: true,
      message_timeout: EXT_PROC_MESSAGE_TIMEOUT,
      processing_mode: {
        request_header_mode: 'SEND',
        response_header_mode: 'SKIP',
        request_body_mode: 'NONE',
        response_body_mode: 'NONE',
        request_trailer_mode: 'SKIP',
        response_trailer_mode: 'SKIP',
      },
      metadata_options: { receiving_namespaces: { untyped: [METADATA_NAMESPACE] } },
      // Which Gateway port the request's listener stands for (listenerMetadata below).
      request_attributes: [ATTRIBUTE_DESTINATION_PORT, ATTRIBUTE_GATEWAY_PORT],
      ...(options.forwardAllHeaders ? {} : { forward_rules: extProcForwardRules(ir) }),
    },
  };
  const apply = steadfastFilter('steadfast', attachFilterConfiguration(options), options.wasmPath);
  const tail = [statefulSessionFilter(), pinRemovalFilter()];
  if (options.answerCache === false) return [extProc, apply, ...tail];
  return [
    steadfastFilter('steadfast-lookup', LOOKUP_FILTER_CONFIGURATION, options.wasmPath, 'steadfast-lookup'),
    skippedWhenAnswered(extProc),
    apply,
    ...tail,
  ];
}

function attachRouterFilter(options: AttachSnippetOptions): Json {
  return routerFilter(options.wasmPath);
}

function extProcCluster(extProcAddress: string): Json {
  const { host, port } = parseHostPort(extProcAddress);
  const literal = IPV4.test(host) || host.includes(':');
  return {
    name: EXT_PROC_CLUSTER,
    type: literal ? 'STATIC' : 'STRICT_DNS',
    connect_timeout: '0.25s',
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': TYPE_HTTP_PROTOCOL_OPTIONS,
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
    load_assignment: {
      cluster_name: EXT_PROC_CLUSTER,
      endpoints: [
        {
          lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }],
        },
      ],
    },
  };
}

function attachRuntime(): Json {
  return { layers: [{ name: 'steadfast', static_layer: { [EXT_PROC_GRACEFUL_CLOSE]: true } }] };
}

function matchText(m: TableMatch): string {
  const parts = [`${m.path.type} ${m.path.value}`];
  if (m.method !== undefined) parts.push(`method ${m.method}`);
  for (const h of m.headers) parts.push(`header ${h.name}`);
  for (const q of m.queryParams) parts.push(`query ${q.name}`);
  return parts.join(', ');
}

function retryText(rule: TableRule): string {
  const r = rule.policy.retry;
  if (!r) return 'no retry stanza; a session falls back to another backend';
  return (
    `${r.attempts} retr${r.attempts === 1 ? 'y' : 'ies'}` +
    (r.backoffMs > 0 ? `, backoff floor ${r.backoffMs} ms` : '')
  );
}

/**
 * Each Gateway port with the listeners and hostnames it serves, and the metadata an Envoy
 * listener that stands for it carries, so the control service matches its requests only
 * against that port's routes.
 */
function listenerMetadata(ir: GatewayIr): Json[] {
  return ir.ports.map((group) => ({
    gateway_port: group.port,
    gateway_listeners: group.listeners.map((l) => l.id),
    hostnames: [...new Set(group.routes.flatMap((r) => r.route.hostnames))].sort(),
    metadata: { filter_metadata: { [METADATA_NAMESPACE]: { [GATEWAY_PORT_METADATA_KEY]: group.port } } },
  }));
}

/**
 * The rules with a retry stanza or a session: the Envoy routes that serve them need the
 * retry policy (the backoff, and retries that skip hosts already tried).
 */
function retryRoutes(ir: GatewayIr): Json[] {
  const out: Json[] = [];
  for (const route of ir.routes) {
    for (const rule of route.rules) {
      if ((!rule.policy.retry && !rule.policy.session) || rule.invalid) continue;
      out.push({
        rule: rule.id,
        retry: retryText(rule),
        hostnames: [...route.hostnames],
        gateway_ports: routePorts(ir, route.id),
        matches: rule.matches.map(matchText),
      });
    }
  }
  return out;
}

function section(comment: readonly string[], value: Json): string {
  return `${comment.map((c) => (c === '' ? '#' : `# ${c}`)).join('\n')}\n${stringify(value, { lineWidth: 0 })}`;
}

/** The snippet's opening comment: what it is, what it talks to, and whether it is a secret. */
function snippetHeader(options: AttachSnippetOptions): string {
  const keys = options.sessionKeys ?? [];
  return [
    'steadfast attach snippet (`steadfast envoy-config --mode attach`): add each part below to',
    'the Envoy configuration you already run. Your listeners, routes and clusters stay yours.',
    `Control service: ${options.extProcAddress} (steadfast serve --ext-proc-address). Filter: ${options.wasmPath}.`,
    '',
    keys.length > 0
      ? `The wasm filter's configuration holds ${keys.length} session key(s): treat this output as a secret.`
      : 'No session keys given (--session-key-file FILE): session persistence cannot seal tokens.',
    '',
  ]
    .map((c) => (c === '' ? '#' : `# ${c}`))
    .join('\n');
}

/** Parts 1-3: the connection manager's filters, the router's upstream half, the pin header. */
function filterChainSections(ir: GatewayIr, options: AttachSnippetOptions): string[] {
  return [
    section(
      [
        '1. In each http_connection_manager that should get Gateway API semantics, put these',
        `   ${options.answerCache === false ? 'four' : 'five'} filters, in this order, before your router (envoy.filters.http.router):`,
        ...(options.answerCache === false
          ? []
          : ["   steadfast.wasm's lookup finds answers it already has, and ext_proc is skipped for them;"]),
        "   ext_proc asks the control service for the request's policy (fails open: without it,",
        '   requests go on without policy); steadfast.wasm applies it; stateful_session pins a',
        `   session to its backend through ${PIN_HEADER}, falling back to load balancing (strict: false);`,
        `   header_mutation removes ${PIN_HEADER} once read, so no backend sees it.`,
      ],
      { http_filters: attachHttpFilters(ir, options) },
    ),
    section(
      [
        '2. Your router filter gains the upstream half of steadfast.wasm, which holds each retry',
        "   until the rule's backoff floor has passed. upstream_codec must stay last.",
      ],
      { router: attachRouterFilter(options) },
    ),
    section(
      [
        "3. In that connection manager's route_config: clients must not choose the pinned host.",
        '   Merge into an existing internal_only_headers list.',
      ],
      { route_config: { internal_only_headers: [PIN_HEADER] } },
    ),
  ];
}

/**
 * The idle timeout of the operator's backend connections, in HTTP/1.1 as Envoy speaks to a
 * cluster that sets no protocol (one that does keeps its own, moved in: idleTimeoutComment).
 */
function clusterProtocolOptions(idleTimeout: string): Json {
  return {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
      '@type': TYPE_HTTP_PROTOCOL_OPTIONS,
      common_http_protocol_options: { idle_timeout: idleTimeout },
      explicit_http_config: { http_protocol_options: {} },
    },
  };
}

/** The comment over 5b's idle timeout: what it is for, or what `off` gives up. */
function idleTimeoutComment(idleTimeout: string): string[] {
  const why =
    idleTimeout === '0s'
      ? [
          '    Idle backend connections stay open (--upstream-idle-timeout off) until the backend closes',
          '    them, which can fail a request going out on one just then.',
        ]
      : [
          `    And close a backend connection idle for ${idleTimeout} (Envoy keeps one an hour): a backend that`,
          '    closes an idle connection first can do so as a request goes out on it, which then fails.',
          "    Keep it under your backends' own keep-alive (docs/hardening.md; --upstream-idle-timeout).",
        ];
  return [
    ...why,
    '    Merge common_http_protocol_options into an existing HttpProtocolOptions and keep its',
    '    protocol. Once a cluster has these options Envoy ignores the protocol fields on the cluster',
    '    itself (http2_protocol_options, http_protocol_options, common_http_protocol_options,',
    '    protocol_selection): move them in here (http2_protocol_options under explicit_http_config,',
    '    USE_DOWNSTREAM_PROTOCOL as use_downstream_protocol_config), or an HTTP/2 or gRPC backend is',
    '    spoken to in HTTP/1.1. explicit_http_config below is HTTP/1.1, for a cluster that sets none.',
  ];
}

/** Parts 4-5b: the routes' retry policy, the control service's cluster, the operator's clusters. */
function routeAndClusterSections(ir: GatewayIr, options: AttachSnippetOptions): string[] {
  const idleTimeout = options.upstreamIdleTimeout ?? UPSTREAM_IDLE_TIMEOUT;
  return [
    section(
      [
        '4. On every route that serves a rule with a retry stanza or a session (listed below), add',
        "   this retry policy (merge it into an existing retry_policy; keep your retry_on). Envoy's",
        "   backoff is jittered from 0 ms; the filter enforces each rule's floor itself. Retries",
        '   skip hosts already tried, so a session whose backend died falls back to a live one.',
      ],
      {
        route_retry_policy: { retry_back_off: { ...RETRY_BACK_OFF }, ...RETRY_OTHER_HOSTS },
        retry_routes: retryRoutes(ir),
      },
    ),
    section(['5. Under static_resources.clusters: the control service (gRPC, so HTTP/2).'], {
      clusters: [extProcCluster(options.extProcAddress)],
    }),
    section(
      [
        '5b. Recommended on each of your clusters the routes above use: eject an endpoint that',
        "    refuses connections (only local failures count; a backend's 5xx never ejects it),",
        '    so sessions and new requests stop trying it until it is back (merge into an existing',
        "    outlier_detection); and raise Envoy's limit of 3 concurrent retries per cluster, past",
        '    which a retry a rule asks for is silently dropped (or set a retry_budget instead).',
        ...idleTimeoutComment(idleTimeout),
      ],
      {
        cluster_outlier_detection: outlierDetection(),
        cluster_circuit_breakers: { thresholds: [{ priority: 'DEFAULT', max_retries: 1024 }] },
        cluster_typed_extension_protocol_options: clusterProtocolOptions(idleTimeout),
      },
    ),
  ];
}

/** Parts 6-7: the bootstrap's runtime layer and the listeners' metadata. */
function bootstrapSections(ir: GatewayIr): string[] {
  return [
    section(
      [
        '6. In the bootstrap: close each ext_proc stream gracefully instead of resetting it, so the',
        "   control service's HTTP/2 server never takes the stream of resets for an attack and",
        '   drops the connection under load. Add the layer, or the key to a static layer you have.',
      ],
      { layered_runtime: attachRuntime() },
    ),
    section(
      [
        '7. On each of your listeners that has the filters above: the control service matches a',
        '   request only against the routes of the Gateway port its listener stands for (as',
        '   gateway mode gives each Gateway port a listener of its own). It takes that port from',
        "   the listener's metadata below (add `metadata` to the listener; merge into an existing",
        '   filter_metadata) or, without it, from the port the listener binds, when a Gateway',
        '   listener has that port. With one Gateway port there is nothing to tell apart. A request',
        "   whose port cannot be told gets a policy only where every port's routes agree, and",
        '   /v1/status (listeners.problems) and the log say so.',
      ],
      { listener_metadata: listenerMetadata(ir) },
    ),
  ];
}

/**
 * The snippet: valid YAML whose top-level keys say where each part goes in the operator's
 * configuration. Deterministic for a given IR and options.
 */
export function generateAttachSnippet(ir: GatewayIr, options: AttachSnippetOptions): string {
  return [
    snippetHeader(options),
    ...filterChainSections(ir, options),
    ...routeAndClusterSections(ir, options),
    ...bootstrapSections(ir),
  ].join('\n');
}
