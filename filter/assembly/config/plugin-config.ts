// The plugin configuration (Envoy's `configuration` of the wasm filter), parsed once
// per configure. A configuration error is reported and refuses the configuration.
import { JsonKind, JsonValue, parseJson } from './json';

/** Where the filter looks for the policy token. */
export enum PolicySource {
  /** ext_proc dynamic metadata first, then route metadata. */
  Auto,
  /** Gateway mode: route metadata only. */
  Route,
  /** Attach mode: ext_proc dynamic metadata only. */
  Metadata,
}

/** Where in Envoy's chain this instance of the filter runs. */
export enum FilterRole {
  /** In the listener's HTTP filter chain: applies the policy to the request. */
  Downstream,
  /** In the router's upstream filter chain: holds retry attempts until the backoff floor. */
  Upstream,
  /**
   * Attach mode, before ext_proc: finds the request's answer in the VM's answer cache and
   * hands it on as filter state, so a matcher skips ext_proc (docs/attach.md).
   */
  Lookup,
}

/**
 * How long a cached answer is fresh (docs/attach.md): with the refresh grace (300 ms) and
 * ext_proc's message_timeout (200 ms), the most a reload can wait is this plus 0.5 s.
 */
export const DEFAULT_ANSWER_CACHE_TTL_MS: u32 = 400;
export const MAX_ANSWER_CACHE_TTL_MS: u32 = 500;

export class PluginConfig {
  role: FilterRole = FilterRole.Downstream;
  /** Adds `x-steadfast-policy` to every response: for tests and troubleshooting, never production. */
  debug: bool = false;
  policySource: PolicySource = PolicySource.Auto;
  /**
   * Gateway mode: the routes are steadfast's own. They carry the retries and timeouts and
   * drop a client's pin header, so the filter writes no router headers but the session's; the
   * upstream half sees retries only and reads each one's floor from the route's policy token.
   */
  gatewayRoutes: bool = false;
  /**
   * Attach mode: use answers the lookup instance found (filter state) and store fresh
   * ext_proc answers that carry a scope in the VM's answer cache.
   */
  answerCache: bool = false;
  /** How long a stored answer is fresh, in ms (1-500). */
  answerCacheTtlMs: u32 = DEFAULT_ANSWER_CACHE_TTL_MS;
  /** Session keys as given (base64); the first seals, all open. */
  sessionKeys: string[] = [];
  /** Keys the filter does not know, reported as a warning. */
  unknownKeys: string[] = [];
  /** Empty when the configuration is valid. */
  error: string = '';
}

function fail(c: PluginConfig, message: string): PluginConfig {
  c.error = message;
  return c;
}

export function parsePluginConfig(text: string): PluginConfig {
  const c = new PluginConfig();
  // Envoy passes an empty buffer when no configuration is set: all defaults.
  if (text.trim().length == 0) return c;
  const root = parseJson(text);
  if (root == null || root.kind != JsonKind.Object) return fail(c, 'configuration is not a JSON object');
  for (let i = 0; i < root.keys.length; i++) {
    const key = root.keys[i];
    const v: JsonValue = root.items[i];
    if (key == 'role') {
      if (v.kind != JsonKind.String) return fail(c, 'role: must be a string');
      if (v.str == 'downstream') c.role = FilterRole.Downstream;
      else if (v.str == 'upstream') c.role = FilterRole.Upstream;
      else if (v.str == 'lookup') c.role = FilterRole.Lookup;
      else return fail(c, 'role: "' + v.str + '" is not one of downstream, upstream, lookup');
    } else if (key == 'debug') {
      if (v.kind != JsonKind.Bool) return fail(c, 'debug: must be true or false');
      c.debug = v.bool;
    } else if (key == 'policySource') {
      if (v.kind != JsonKind.String) return fail(c, 'policySource: must be a string');
      if (v.str == 'auto') c.policySource = PolicySource.Auto;
      else if (v.str == 'route') c.policySource = PolicySource.Route;
      else if (v.str == 'metadata') c.policySource = PolicySource.Metadata;
      else return fail(c, 'policySource: "' + v.str + '" is not one of auto, route, metadata');
    } else if (key == 'gatewayRoutes') {
      if (v.kind != JsonKind.Bool) return fail(c, 'gatewayRoutes: must be true or false');
      c.gatewayRoutes = v.bool;
    } else if (key == 'answerCache') {
      if (v.kind != JsonKind.Bool) return fail(c, 'answerCache: must be true or false');
      c.answerCache = v.bool;
    } else if (key == 'answerCacheTtlMs') {
      const max = <f64>MAX_ANSWER_CACHE_TTL_MS;
      if (v.kind != JsonKind.Number || !(v.num >= 1 && v.num <= max) || v.num != Math.floor(v.num)) {
        return fail(c, 'answerCacheTtlMs: must be a whole number of milliseconds in 1-500');
      }
      c.answerCacheTtlMs = <u32>v.num;
    } else if (key == 'sessionKeys') {
      if (v.kind != JsonKind.Array) return fail(c, 'sessionKeys: must be an array of base64 strings');
      for (let j = 0; j < v.items.length; j++) {
        const k = v.items[j];
        if (k.kind != JsonKind.String || k.str.length == 0) {
          return fail(c, 'sessionKeys[' + j.toString() + ']: must be a non-empty base64 string');
        }
        c.sessionKeys.push(k.str);
      }
    } else {
      c.unknownKeys.push(key);
    }
  }
  return c;
}
