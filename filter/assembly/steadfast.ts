// The steadfast filter: finds the request's policy token, applies it, and (in debug
// mode) echoes the token on the response.
import { RootContext, HttpContext } from './abi/context';
import { BufferType, FilterHeadersStatus, HeaderMapType, LogLevel } from './abi/enums';
import {
  getBuffer,
  getPropertyString,
  incrementCounter,
  log,
  logEnabled,
  refreshLogLevel,
  setHeader,
} from './abi/host';
import { parsePluginConfig, PluginConfig, PolicySource } from './config/plugin-config';
import { H_DEBUG_POLICY } from './headers';
import { FilterMetrics } from './metrics';
import { Policy, PolicyCache } from './policy/token';
import { P_METADATA_POLICY, P_ROUTE_POLICY } from './properties';
import { applyRouterHeaders, stripClientControlHeaders } from './retry/router-headers';

const POLICY_CACHE_ENTRIES = 512;
/** How many requests between two looks at the host's log level. */
const LOG_LEVEL_REFRESH = 1024;

export class SteadfastRoot extends RootContext {
  config: PluginConfig = new PluginConfig();
  readonly policies: PolicyCache = new PolicyCache(POLICY_CACHE_ENTRIES);
  readonly metrics: FilterMetrics = new FilterMetrics();
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
    this.config = config;
    this.metrics.define();
    if (logEnabled(LogLevel.Info)) log(LogLevel.Info, 'steadfast: configured');
    return true;
  }

  createHttpContext(contextId: u32): HttpContext {
    if (++this.streamsSinceLogRefresh >= LOG_LEVEL_REFRESH) {
      this.streamsSinceLogRefresh = 0;
      refreshLogLevel();
    }
    return new SteadfastHttp(contextId, this);
  }
}

export class SteadfastHttp extends HttpContext {
  private token: string | null = null;
  private policy: Policy | null = null;

  constructor(
    contextId: u32,
    private readonly plugin: SteadfastRoot,
  ) {
    super(contextId, plugin);
  }

  /** The token from ext_proc metadata or route metadata, as the configuration says. */
  private findToken(): string | null {
    const source = this.plugin.config.policySource;
    let token: string | null = null;
    if (source != PolicySource.Route) token = getPropertyString(P_METADATA_POLICY);
    if (token == null && source != PolicySource.Metadata) token = getPropertyString(P_ROUTE_POLICY);
    return token;
  }

  onRequestHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const metrics = this.plugin.metrics;
    incrementCounter(metrics.requests);
    // Client-sent router control headers never survive (DESIGN.md, "Retries").
    stripClientControlHeaders();
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
    applyRouterHeaders(policy);
    incrementCounter(metrics.policyApplied);
    return FilterHeadersStatus.Continue;
  }

  onResponseHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    const token = this.token;
    if (this.plugin.config.debug && token != null) {
      setHeader(HeaderMapType.ResponseHeaders, H_DEBUG_POLICY, token);
    }
    return FilterHeadersStatus.Continue;
  }
}
