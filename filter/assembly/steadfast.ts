// The steadfast filter. Downstream (the listener's chain): finds the request's policy
// token, applies it, and in debug mode echoes the token on the response. Upstream (the
// router's upstream chain): holds retry attempts until the backoff floor has passed.
import { HttpContext, RootContext } from './abi/context';
import { BufferType, FilterHeadersStatus, HeaderMapType, LogLevel } from './abi/enums';
import {
  getBuffer,
  getHeader,
  getPropertyString,
  incrementCounter,
  log,
  logEnabled,
  nowNanos,
  refreshLogLevel,
  resumeRequest,
  setHeader,
  setTickPeriod,
} from './abi/host';
import { FilterRole, parsePluginConfig, PluginConfig, PolicySource } from './config/plugin-config';
import { H_ATTEMPT_COUNT, H_DEBUG_POLICY, H_REQUEST_ID } from './headers';
import { FilterMetrics } from './metrics';
import { Policy, PolicyCache } from './policy/token';
import { P_METADATA_POLICY, P_ROUTE_POLICY } from './properties';
import { lookUpAnswer, takeAnswer } from './answers/request-answer';
import {
  backoffFloorMs,
  closeGate,
  findGate,
  HeldAttempts,
  openGate,
  openGateCount,
  RetryGate,
} from './retry/retry-gate';
import { allowPinnedFallback, applyRouterHeaders, stripClientControlHeaders } from './retry/router-headers';
import { SessionKeys } from './session/keys';
import { OpenedSessionCache } from './session/opened-cache';
import { removePinFromRequest, removePinFromResponse, StickySession } from './session/sticky-session';

const POLICY_CACHE_ENTRIES = 512;
/** How many requests between two looks at the host's log level. */
const LOG_LEVEL_REFRESH = 1024;
/** Tick period while retry attempts are held: the floor is met to within this. */
const HOLD_TICK_MS: u32 = 5;
/** Request ids longer than this are not used as keys (Envoy's are 36-character UUIDs). */
const MAX_REQUEST_ID = 128;

export class SteadfastRoot extends RootContext {
  config: PluginConfig = new PluginConfig();
  readonly policies: PolicyCache = new PolicyCache(POLICY_CACHE_ENTRIES);
  readonly metrics: FilterMetrics = new FilterMetrics();
  readonly held: HeldAttempts = new HeldAttempts();
  /** The session key ring: the first key seals, all open. */
  readonly keys: SessionKeys = new SessionKeys();
  /** Tokens opened under the current keys. */
  readonly sessions: OpenedSessionCache = new OpenedSessionCache();
  private ticking: bool = false;
  private readonly due: u32[] = [];
  private streamsSinceLogRefresh: i32 = 0;

  onConfigure(configSize: u32): bool {
    refreshLogLevel();
    const raw = getBuffer(BufferType.PluginConfiguration, configSize);
    const text = raw != null ? String.UTF8.decode(raw) : '';
    const config = parsePluginConfig(text);
    if (config.error.length > 0) {
      log(LogLevel.Error, 'steadfast: invalid plugin configuration: ' + config.error);
      return false;
    }
    if (config.unknownKeys.length > 0 && logEnabled(LogLevel.Warn)) {
      log(LogLevel.Warn, 'steadfast: ignoring unknown configuration keys: ' + config.unknownKeys.join(', '));
    }
    const keys = new SessionKeys();
    for (let i = 0; i < config.sessionKeys.length; i++) {
      if (!keys.addBase64(config.sessionKeys[i])) {
        log(
          LogLevel.Error,
          'steadfast: invalid plugin configuration: sessionKeys[' +
            i.toString() +
            ']: not a base64 32-byte key, or more than 16 keys',
        );
        return false;
      }
    }
    this.keys.clear();
    for (let i = 0; i < config.sessionKeys.length; i++) this.keys.addBase64(config.sessionKeys[i]);
    this.sessions.clear();
    this.config = config;
    this.metrics.define();
    if (logEnabled(LogLevel.Info)) {
      const role =
        config.role == FilterRole.Upstream
          ? 'upstream'
          : config.role == FilterRole.Lookup
            ? 'lookup'
            : 'downstream';
      log(LogLevel.Info, 'steadfast: configured (' + role + ')');
    }
    return true;
  }

  createHttpContext(contextId: u32): HttpContext {
    if (++this.streamsSinceLogRefresh >= LOG_LEVEL_REFRESH) {
      this.streamsSinceLogRefresh = 0;
      refreshLogLevel();
    }
    if (this.config.role == FilterRole.Upstream) return new SteadfastUpstream(contextId, this);
    if (this.config.role == FilterRole.Lookup) return new SteadfastLookup(contextId, this);
    return new SteadfastHttp(contextId, this);
  }

  /** Holds an attempt until `dueNs`; the tick runs only while something is held. */
  hold(contextId: u32, dueNs: u64): void {
    this.held.hold(contextId, dueNs);
    if (!this.ticking) {
      setTickPeriod(HOLD_TICK_MS);
      this.ticking = true;
    }
  }

  onTick(): void {
    this.held.takeDue(nowNanos(), this.due);
    for (let i = 0; i < this.due.length; i++) resumeRequest(unchecked(this.due[i]));
    this.due.length = 0;
    if (this.held.size == 0 && this.ticking) {
      setTickPeriod(0);
      this.ticking = false;
    }
  }
}

function nowSeconds(): u64 {
  return nowNanos() / 1_000_000_000;
}

/** A held retry in gateway mode: the router's attempt counter says it is not the first. */
function isRetryAttempt(): bool {
  const count = getHeader(HeaderMapType.RequestHeaders, H_ATTEMPT_COUNT);
  return count != null && count.length > 0 && count != '1';
}

/** One request in the listener's filter chain. */
export class SteadfastHttp extends HttpContext {
  private token: string | null = null;
  private policy: Policy | null = null;
  private gateId: string | null = null;
  private session: StickySession | null = null;
  /** The one clock read of a session request (whole seconds). */
  private nowS: u64 = 0;

  constructor(
    contextId: u32,
    private readonly plugin: SteadfastRoot,
  ) {
    super(contextId, plugin);
  }

  /** The token from ext_proc metadata (or the answer cache) or route metadata, as the configuration says. */
  private findToken(): string | null {
    const config = this.plugin.config;
    const source = config.policySource;
    let token: string | null = null;
    if (source != PolicySource.Route) {
      if (config.answerCache) {
        const found = takeAnswer(config.answerCacheTtlMs);
        if (found.stored) incrementCounter(this.plugin.metrics.answerCacheStored);
        token = found.token;
      } else {
        token = getPropertyString(P_METADATA_POLICY);
      }
    }
    if (token == null && source != PolicySource.Metadata) token = getPropertyString(P_ROUTE_POLICY);
    return token;
  }

  onRequestHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const metrics = this.plugin.metrics;
    const config = this.plugin.config;
    incrementCounter(metrics.requests);
    // A client-sent host pin never reaches stateful_session. Gateway mode's routes drop it
    // already (internal_only_headers); an operator's routes may not.
    if (!config.gatewayRoutes) removePinFromRequest();
    const token = this.findToken();
    this.token = token;
    if (token == null) {
      incrementCounter(metrics.policyMissing);
      return FilterHeadersStatus.Continue;
    }
    const policy = this.plugin.policies.get(token);
    if (policy == null) {
      incrementCounter(metrics.policyInvalid);
      if (logEnabled(LogLevel.Warn)) log(LogLevel.Warn, 'steadfast: ignoring a malformed policy token');
      return FilterHeadersStatus.Continue;
    }
    this.policy = policy;
    if (config.gatewayRoutes) {
      // The route carries the retries and timeouts (and Envoy strips a client's router
      // headers); what is left is the session, and its fallback retry when pinned.
      if (policy.hasSession && this.beginSession(policy) && !policy.hasRetry) allowPinnedFallback();
      incrementCounter(metrics.policyApplied);
      return FilterHeadersStatus.Continue;
    }
    // Client-sent router control headers never survive under a policy
    // (docs/retries.md): Envoy strips them from external requests, and so does the filter
    // before it writes its own.
    stripClientControlHeaders();
    let pinned: bool = false;
    if (policy.hasSession) pinned = this.beginSession(policy);
    applyRouterHeaders(policy, pinned);
    const floorMs = backoffFloorMs(policy);
    if (floorMs > 0) this.openRetryGate(floorMs);
    incrementCounter(metrics.policyApplied);
    return FilterHeadersStatus.Continue;
  }

  private beginSession(policy: Policy): bool {
    const keys = this.plugin.keys;
    if (keys.length == 0) {
      // No key, no session: the gateway still answers, it just cannot be sticky.
      incrementCounter(this.plugin.metrics.sessionUnavailable);
      return false;
    }
    const session = new StickySession();
    this.session = session;
    this.nowS = nowSeconds();
    return session.begin(policy, keys, this.plugin.sessions, this.nowS, this.plugin.metrics);
  }

  private openRetryGate(backoffMs: i32): void {
    const id = getHeader(HeaderMapType.RequestHeaders, H_REQUEST_ID);
    if (id == null || id.length == 0 || id.length > MAX_REQUEST_ID) return;
    if (openGate(id, backoffMs)) this.gateId = id;
    else incrementCounter(this.plugin.metrics.retryGateFull);
  }

  onResponseHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const session = this.session;
    const policy = this.policy;
    // stateful_session writes the served host into a response: it must not leak.
    if (session != null && policy != null) {
      session.finish(policy, this.plugin.keys, this.nowS, this.plugin.metrics);
    } else {
      removePinFromResponse();
    }
    const token = this.token;
    if (this.plugin.config.debug && token != null) {
      setHeader(HeaderMapType.ResponseHeaders, H_DEBUG_POLICY, token);
    }
    return FilterHeadersStatus.Continue;
  }

  onDone(): void {
    const id = this.gateId;
    if (id != null) {
      closeGate(id);
      this.gateId = null;
    }
  }
}

/** Attach mode, before ext_proc: a known answer lets the request skip it. */
export class SteadfastLookup extends HttpContext {
  constructor(
    contextId: u32,
    private readonly plugin: SteadfastRoot,
  ) {
    super(contextId, plugin);
  }

  onRequestHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const metrics = this.plugin.metrics;
    incrementCounter(lookUpAnswer() ? metrics.answerCacheHit : metrics.answerCacheMiss);
    return FilterHeadersStatus.Continue;
  }
}

/** One attempt in the router's upstream filter chain. */
export class SteadfastUpstream extends HttpContext {
  private gate: RetryGate | null = null;
  private held: bool = false;

  constructor(
    contextId: u32,
    private readonly plugin: SteadfastRoot,
  ) {
    super(contextId, plugin);
  }

  onRequestHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    if (this.plugin.config.gatewayRoutes) return this.holdGatewayRetry();
    // Most requests have no backoff floor: no host call for them.
    if (openGateCount() == 0) return FilterHeadersStatus.Continue;
    const id = getHeader(HeaderMapType.RequestHeaders, H_REQUEST_ID);
    if (id == null) return FilterHeadersStatus.Continue;
    const gate = findGate(id);
    if (gate == null) return FilterHeadersStatus.Continue;
    this.gate = gate;
    const due = gate.dueNs();
    gate.attempts++;
    if (due == 0) return FilterHeadersStatus.Continue;
    const now = nowNanos();
    if (now >= due) return FilterHeadersStatus.Continue;
    return this.holdUntil(due, now);
  }

  /**
   * Gateway mode: only retries reach this instance (match_delegate skips first attempts), so
   * the route's policy token — the one the downstream half reads — is read here, on a retry
   * and never on a first attempt. The previous attempt ended before this one reached the
   * filter, so holding it the floor from now keeps the floor.
   */
  private holdGatewayRetry(): FilterHeadersStatus {
    if (!isRetryAttempt()) return FilterHeadersStatus.Continue;
    const token = getPropertyString(P_ROUTE_POLICY);
    if (token == null) return FilterHeadersStatus.Continue;
    const policy = this.plugin.policies.get(token);
    if (policy == null) {
      if (logEnabled(LogLevel.Warn)) log(LogLevel.Warn, 'steadfast: ignoring a malformed policy token');
      return FilterHeadersStatus.Continue;
    }
    const floorMs = backoffFloorMs(policy);
    if (floorMs <= 0) return FilterHeadersStatus.Continue;
    const now = nowNanos();
    return this.holdUntil(now + <u64>floorMs * 1_000_000, now);
  }

  private holdUntil(due: u64, now: u64): FilterHeadersStatus {
    this.held = true;
    this.plugin.hold(this.contextId, due);
    const metrics = this.plugin.metrics;
    incrementCounter(metrics.retryHeld);
    incrementCounter(metrics.retryHeldMs, <i64>((due - now) / 1_000_000));
    // Stop everything, the (already buffered) body included, until the tick resumes us.
    return FilterHeadersStatus.StopAllIterationAndBuffer;
  }

  onResponseHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const gate = this.gate;
    // The router decides on a retry when the response headers arrive: the attempt ends here.
    if (gate != null) gate.lastEndNs = nowNanos();
    return FilterHeadersStatus.Continue;
  }

  onDone(): void {
    const gate = this.gate;
    if (gate != null) {
      // A reset or a per-try timeout ends the attempt without response headers.
      const now = nowNanos();
      if (now > gate.lastEndNs) gate.lastEndNs = now;
    }
    if (this.held) this.plugin.held.drop(this.contextId);
  }
}
