// The status row upstream's route tests start with (GatewayAndHTTPRoutesMustBeAccepted,
// HTTPRouteMustHaveResolvedRefsConditionsTrue): the route is Accepted and its references
// resolved on its Gateway.
import type { StatusCase } from './conformance-case.js';

export function routeAcceptedAndResolved(
  kind: 'HTTPRoute' | 'GRPCRoute',
  name: string,
  gateway: string,
  /** The listener the route's parentRef names, when it names one. */
  sectionName?: string,
): StatusCase {
  return {
    status: {
      kind,
      name,
      parents: [
        {
          gateway,
          ...(sectionName !== undefined ? { sectionName } : {}),
          conditions: [
            { type: 'Accepted', status: 'True', reason: 'Accepted' },
            { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
          ],
        },
      ],
    },
  };
}
