// HTTPRoute (v1, v1beta1) and GRPCRoute (v1).
import { NO_ITEMS, sharedShape } from '../../json.js';
import { Fields, type Rec, exact } from '../fields.js';
import type { Route, RouteRule } from '../model.js';
import type { SourceObject } from '../parse.js';
import { SECTION_NAME } from '../patterns.js';
import { decodeMetadata, spec as specOf } from './metadata.js';
import { decodeRetry, decodeTimeouts } from './retry-timeouts.js';
import { checkBackendPrefixReplacement, checkPrefixReplacement } from './path-filters.js';
import { decodeFilters } from './route-filters.js';
import { decodeGrpcMatches, decodeHttpMatches } from './route-matches.js';
import { decodeBackendRefs, decodeHostnames, decodeParentRefs } from './route-refs.js';
import { decodeSessionPersistence } from './session-persistence.js';

/** Long on purpose: field after field in the schema's order, each with its CEL rules. */
export function decodeRoute(src: SourceObject, kind: 'HTTPRoute' | 'GRPCRoute'): Route {
  const f = new Fields();
  const meta = decodeMetadata(src, f);
  const grpc = kind === 'GRPCRoute';
  const spec = specOf(src, f);
  const path = ['spec'];
  f.known(spec, path, ['parentRefs', 'hostnames', 'rules', 'useDefaultGateways']);
  const parentRefs = decodeParentRefs(spec, path, f, src.namespace);
  const hostnames = decodeHostnames(spec, path, f);
  const rules: RouteRule[] = [];
  // Default: one rule matching everything (HTTPRoute's schema default; GRPCRoute matches all too).
  const rawRules: [Rec, number][] =
    spec.rules === undefined ? [[{}, 0]] : f.recs(spec, 'rules', path, { min: grpc ? 0 : 1, max: 16 });
  let totalMatches = 0;
  const names = new Set<string>();
  for (const [rule, i] of rawRules) {
    const at = ['spec', 'rules', i];
    f.known(rule, at, [
      'name',
      'matches',
      'filters',
      'backendRefs',
      'timeouts',
      'retry',
      'sessionPersistence',
    ]);
    const name = f.str(rule, 'name', at, { minLength: 1, maxLength: 253, pattern: SECTION_NAME });
    if (name !== undefined) {
      if (names.has(name))
        f.add([...at, 'name'], 'rule-violation', 'Rule name must be unique within the route');
      names.add(name);
    }
    const httpMatches = grpc ? NO_ITEMS : decodeHttpMatches(rule, at, f);
    const grpcMatches = grpc ? decodeGrpcMatches(rule, at, f) : NO_ITEMS;
    totalMatches += Array.isArray(rule.matches) ? rule.matches.length : 0;
    const filters = decodeFilters(rule, at, f, grpc, src.namespace);
    const prefixRule = { matches: httpMatches, rule, path: at };
    if (!grpc) checkPrefixReplacement(filters, prefixRule, f);
    const backendRefs = decodeBackendRefs(rule, at, f, src.namespace, grpc);
    if (!grpc) checkBackendPrefixReplacement(backendRefs, prefixRule, f);
    const retry = decodeRetry(rule, at, f, grpc);
    const timeouts = decodeTimeouts(rule, at, f);
    const spRec = f.rec(rule, 'sessionPersistence', at);
    const session = spRec ? decodeSessionPersistence(spRec, [...at, 'sessionPersistence'], f) : undefined;
    rules.push({
      index: i,
      ...(name !== undefined ? { name } : {}),
      httpMatches,
      grpcMatches,
      filters,
      backendRefs,
      ...(retry ? { retry } : {}),
      ...(timeouts ? { timeouts } : {}),
      ...(session ? { session } : {}),
    });
  }
  if (totalMatches > 128) {
    f.add(
      ['spec', 'rules'],
      'rule-violation',
      'While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128',
    );
  }
  return sharedShape({ ...meta, kind, parentRefs, hostnames, rules: exact(rules), errors: f.errors });
}
