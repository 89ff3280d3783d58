// Route matches → table matches. A GRPCRoute method match becomes the equivalent match on
// the request path, since gRPC requests are `POST /<service>/<method>`.
import type { GrpcRouteMatch, HttpRouteMatch } from '../gatewayapi/model.js';
import type { TableMatch } from '../policy/policy-table.js';
import { flatId } from '../json.js';

export function httpMatch(ruleId: string, m: HttpRouteMatch): TableMatch {
  return {
    id: flatId(ruleId, 'match', m.index),
    path: m.path,
    ...(m.method !== undefined ? { method: m.method } : {}),
    headers: m.headers,
    queryParams: m.queryParams,
  };
}

function grpcPath(m: GrpcRouteMatch): TableMatch['path'] {
  const mm = m.method;
  if (!mm) return { type: 'PathPrefix', value: '/' };
  if (mm.type === 'RegularExpression') {
    return {
      type: 'RegularExpression',
      value: `^/(?:${mm.service ?? '[^/]+'})/(?:${mm.method ?? '[^/]+'})$`,
    };
  }
  const service = mm.service?.replace(/^\./, '');
  if (service !== undefined && mm.method !== undefined)
    return { type: 'Exact', value: `/${service}/${mm.method}` };
  if (service !== undefined) return { type: 'PathPrefix', value: `/${service}` };
  // Method without service (implementation-specific): any service.
  return { type: 'RegularExpression', value: `^/[^/]+/${mm.method ?? ''}$` };
}

export function grpcMatch(ruleId: string, m: GrpcRouteMatch): TableMatch {
  return {
    id: flatId(ruleId, 'match', m.index),
    path: grpcPath(m),
    method: 'POST',
    headers: m.headers,
    queryParams: [],
    ...(m.method ? { grpc: m.method } : {}),
  };
}
