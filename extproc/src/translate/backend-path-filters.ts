// A backendRef's RequestRedirect and URLRewrite. Envoy's weighted clusters can neither redirect
// nor rewrite a share of a route's requests, so steadfast carries them out only when every
// backendRef of the rule has the same one: it then acts as the rule's own (every request
// takes it). Any other arrangement fails the rule closed, with a message that says why.
import { Reason } from '../gatewayapi/codes.js';
import type { BackendRef, RouteRule } from '../gatewayapi/model.js';
import type { TableRedirect, TableRewrite } from '../policy/route-filters.js';

/** What a rule takes from its backendRefs' path filters: a redirect, a rewrite, or why it cannot. */
export interface BackendPathFilters {
  readonly redirect?: TableRedirect;
  readonly rewrite?: TableRewrite;
  readonly invalid?: { readonly reason: string; readonly message: string };
}

const WHY =
  'Envoy cannot redirect or rewrite a weighted share of a rule, so steadfast carries out a backendRef RequestRedirect or URLRewrite only when every backendRef of the rule has the same one';

/** The backendRef's RequestRedirect or URLRewrite, as a comparable key ("" for none). */
function pathFilterKey(ref: BackendRef): string {
  const f = ref.filters.find((x) => x.redirect !== undefined || x.rewrite !== undefined);
  return f ? JSON.stringify({ redirect: f.redirect, rewrite: f.rewrite }) : '';
}

function unsupported(message: string): BackendPathFilters {
  return { invalid: { reason: Reason.UnsupportedValue, message } };
}

export function backendPathFilters(rule: RouteRule): BackendPathFilters {
  const keys = rule.backendRefs.map(pathFilterKey);
  const first = keys[0];
  if (first === undefined || keys.every((k) => k === '')) return {};
  const other = keys.findIndex((k) => k !== first);
  if (other >= 0) {
    return unsupported(
      `backendRefs[0] and backendRefs[${other}] differ in RequestRedirect/URLRewrite: ${WHY}`,
    );
  }
  if (rule.filters.some((f) => f.rewrite !== undefined)) {
    return unsupported(
      "a URLRewrite on the rule and a RequestRedirect or URLRewrite on its backendRefs cannot be combined in steadfast (the backendRefs' one would apply to the rewritten request, which is not one Envoy action)",
    );
  }
  const filter = rule.backendRefs[0]?.filters.find((x) => x.redirect ?? x.rewrite);
  const prefix = (filter?.redirect ?? filter?.rewrite)?.path?.type === 'ReplacePrefixMatch';
  const match = rule.httpMatches[0];
  if (prefix && (rule.httpMatches.length !== 1 || match?.path.type !== 'PathPrefix')) {
    // The schema's rule holds only when one backendRef has it: the others meet it here.
    return unsupported(
      'a backendRef path.replacePrefixMatch needs the rule to have exactly one PathPrefix match',
    );
  }
  return {
    ...(filter?.redirect ? { redirect: filter.redirect } : {}),
    ...(filter?.rewrite ? { rewrite: filter.rewrite } : {}),
  };
}
