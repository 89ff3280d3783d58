// The Envoy route of one (rule, match): the policy token in route metadata, the rule's
// cluster (or weighted split), a retry policy that only sets the backoff, and header
// modifiers. A rule that failed validation answers 500 (fail closed).
import type { HeaderModifier, TableMatch, TableRule } from '../table/policy-table.js';
import { METADATA_NAMESPACE, METADATA_POLICY_KEY } from './envoy-names.js';
import type { RuleClusters } from './rule-clusters.js';
import { routeMatch } from './route-match.js';
import type { Json } from '../json.js';

/**
 * The filter writes the retry count and conditions per request; the route only keeps
 * Envoy's own jittered backoff as short as Envoy allows (values under 1 ms are rounded up
 * to 1 ms). steadfast's filter enforces the GEP-1731 backoff floor itself.
 */
export const RETRY_BACK_OFF = { base_interval: '0.001s', max_interval: '0.001s' } as const;

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

function modifiers(rule: TableRule): Json {
  const out: Json = {};
  const req = rule.requestHeaders;
  const res = rule.responseHeaders;
  if (req && req.set.length + req.add.length > 0) out['request_headers_to_add'] = headersToAdd(req);
  if (req && req.remove.length > 0) out['request_headers_to_remove'] = [...req.remove];
  if (res && res.set.length + res.add.length > 0) out['response_headers_to_add'] = headersToAdd(res);
  if (res && res.remove.length > 0) out['response_headers_to_remove'] = [...res.remove];
  return out;
}

export function envoyRoute(rule: TableRule, match: TableMatch, clusters: RuleClusters | undefined): Json {
  const base: Json = {
    name: match.id,
    match: routeMatch(match),
    metadata: { filter_metadata: { [METADATA_NAMESPACE]: { [METADATA_POLICY_KEY]: rule.token } } },
  };
  const usable = clusters?.targets.filter((t) => t.weight > 0) ?? [];
  if (rule.invalid || !clusters || clusters.targets.length === 0) {
    return { ...base, direct_response: { status: 500 } };
  }
  const target =
    clusters.targets.length === 1 || usable.length === 0
      ? { cluster: clusters.targets[0]?.name }
      : { weighted_clusters: { clusters: usable.map((t) => ({ name: t.name, weight: t.weight })) } };
  return {
    ...base,
    route: {
      ...target,
      ...(clusters.unresolved ? { cluster_not_found_response_code: 'INTERNAL_SERVER_ERROR' } : {}),
      retry_policy: { retry_back_off: { ...RETRY_BACK_OFF } },
      // A WebSocket lives longer than any request timeout; the filter still sets one when the rule asks.
      ...(clusters.websocket ? { timeout: '0s', upgrade_configs: [{ upgrade_type: 'websocket' }] } : {}),
      // GRPCRoute has no timeouts: streams are not cut at Envoy's 15 s default, and the client's
      // grpc-timeout header bounds the call instead.
      ...(rule.policy.kind === 'grpc'
        ? { timeout: '0s', max_stream_duration: { grpc_timeout_header_max: '0s' } }
        : {}),
    },
    ...modifiers(rule),
  };
}
