// Where a retry may go: never back to a host this request already tried, so the one
// fallback attempt of a session whose backend died cannot land on the dead backend again.
import { TYPE_PREVIOUS_HOSTS } from './envoy-names.js';

/**
 * Fields for a route's retry_policy. Envoy picks again, up to `host_selection_retry_max_attempts`
 * times, while the load balancer offers a host already tried; after that it takes what it got
 * (a cluster with one endpoint still retries on it).
 */
export const RETRY_OTHER_HOSTS = {
  retry_host_predicate: [
    { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': TYPE_PREVIOUS_HOSTS } },
  ],
  host_selection_retry_max_attempts: 5,
} as const;
