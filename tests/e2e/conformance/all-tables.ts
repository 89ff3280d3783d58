// Every ported upstream conformance test, in the order they run and the table lists them.
import { BACKEND_FILTER_TESTS } from './backend-filter-tables.js';
import { BACKEND_REDIRECT_REWRITE_TESTS } from './backend-redirect-rewrite-tables.js';
import { BACKEND_TLS_TESTS } from './backend-tls-tables.js';
import { CLIENT_CERTIFICATE_TESTS } from './client-certificate-tables.js';
import type { ConformanceTest } from './conformance-case.js';
import { CORS_TESTS } from './cors-tables.js';
import { GATEWAY_STATUS_TESTS } from './gateway-status-tables.js';
import { GRPCROUTE_HOSTNAME_TESTS } from './grpcroute-hostname-tables.js';
import { GRPCROUTE_TESTS } from './grpcroute-tables.js';
import { HOSTNAME_TESTS } from './hostname-tables.js';
import { LISTENER_ISOLATION_TESTS } from './listener-isolation-tables.js';
import { LISTENER_PORT_TESTS } from './listener-port-tables.js';
import { MIRROR_TESTS } from './mirror-tables.js';
import { MISDIRECTED_TESTS } from './misdirected-tables.js';
import { REDIRECT_REWRITE_TESTS } from './redirect-rewrite-tables.js';

export const CONFORMANCE_TESTS: readonly ConformanceTest[] = [
  ...REDIRECT_REWRITE_TESTS,
  ...MIRROR_TESTS,
  ...BACKEND_FILTER_TESTS,
  ...CORS_TESTS,
  ...HOSTNAME_TESTS,
  ...LISTENER_ISOLATION_TESTS,
  ...LISTENER_PORT_TESTS,
  ...MISDIRECTED_TESTS,
  ...GATEWAY_STATUS_TESTS,
  ...BACKEND_REDIRECT_REWRITE_TESTS,
  ...GRPCROUTE_TESTS,
  ...GRPCROUTE_HOSTNAME_TESTS,
  ...BACKEND_TLS_TESTS,
  ...CLIENT_CERTIFICATE_TESTS,
];
