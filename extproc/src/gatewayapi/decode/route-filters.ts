// rules[].filters: the schema's type/field rules; what steadfast supports is decided in translate.
import type { FieldPath } from '../diagnostic.js';
import { type Fields, type Rec, exact } from '../fields.js';
import type { RouteFilter } from '../model.js';
import { TOKEN } from '../patterns.js';
import { isRouterControlHeader } from '../router-control-headers.js';
import { decodeCors } from './cors-filter.js';
import { decodeMirror } from './mirror-filter.js';
import { decodeRedirect, decodeRewrite } from './path-filters.js';

const HTTP_FILTERS: Readonly<Record<string, string>> = {
  RequestHeaderModifier: 'requestHeaderModifier',
  ResponseHeaderModifier: 'responseHeaderModifier',
  RequestMirror: 'requestMirror',
  RequestRedirect: 'requestRedirect',
  URLRewrite: 'urlRewrite',
  ExtensionRef: 'extensionRef',
  CORS: 'cors',
  ExternalAuth: 'externalAuth',
};
const GRPC_FILTERS = ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef'];
const NOT_REPEATABLE = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
  'CORS',
];

/** A request header modifier may not name the router's own retry and timeout controls. */
function checkRouterControl(name: string | undefined, at: FieldPath, f: Fields): void {
  if (name !== undefined && isRouterControlHeader(name))
    f.add(
      at,
      'reserved-header',
      `${name} is a retry or timeout control of Envoy's router, which steadfast sets from the rule's retry and timeouts; a header modifier cannot set or remove it (the backend never receives it)`,
    );
}

function headerList(
  mod: Rec,
  key: string,
  at: FieldPath,
  f: Fields,
  request: boolean,
): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const [h, i] of f.recs(mod, key, at, { max: 16 })) {
    const name = f.str(h, 'name', [...at, key, i], {
      required: true,
      minLength: 1,
      maxLength: 256,
      pattern: TOKEN,
    });
    if (request) checkRouterControl(name, [...at, key, i, 'name'], f);
    const value = f.str(h, 'value', [...at, key, i], { required: true, minLength: 1, maxLength: 4096 });
    if (name !== undefined && value !== undefined) out.push({ name, value });
  }
  return out;
}

/** A header modifier's set, add and remove (a request one may not name the router's controls). */
function decodeHeaderModifier(flt: Rec, at: FieldPath, f: Fields, request: boolean): RouteFilter['headers'] {
  const field = request ? 'requestHeaderModifier' : 'responseHeaderModifier';
  const mod = f.rec(flt, field, at);
  if (!mod) return undefined;
  const mat = [...at, field];
  f.known(mod, mat, ['set', 'add', 'remove']);
  const remove: string[] = [];
  f.list(mod, 'remove', mat, { max: 16 }).forEach((r, j) => {
    const v = f.checkStr(r, [...mat, 'remove', j], { minLength: 1, maxLength: 256, pattern: TOKEN });
    if (request) checkRouterControl(v, [...mat, 'remove', j], f);
    if (v !== undefined) remove.push(v);
  });
  return {
    set: headerList(mod, 'set', mat, f, request),
    add: headerList(mod, 'add', mat, f, request),
    remove,
  };
}

/** Long on purpose: one case per filter type, in the schema's order, each with its CEL rules. */
export function decodeFilters(
  rule: Rec,
  path: FieldPath,
  f: Fields,
  grpc: boolean,
  namespace: string,
): readonly RouteFilter[] {
  const out: RouteFilter[] = [];
  const types = grpc ? GRPC_FILTERS : Object.keys(HTTP_FILTERS);
  for (const [flt, i] of f.recs(rule, 'filters', path, { max: 16 })) {
    const at = [...path, 'filters', i];
    const type = f.str(flt, 'type', at, { required: true, enum: types });
    if (type === undefined) continue;
    for (const [t, field] of Object.entries(HTTP_FILTERS)) {
      if (flt[field] !== undefined && t !== type)
        f.add(at, 'rule-violation', `filter.${field} must be nil if the filter.type is not ${t}`);
      if (flt[field] === undefined && t === type)
        f.add(at, 'rule-violation', `filter.${field} must be specified for ${t} filter.type`);
    }
    const headers =
      type === 'RequestHeaderModifier' || type === 'ResponseHeaderModifier'
        ? decodeHeaderModifier(flt, at, f, type === 'RequestHeaderModifier')
        : undefined;
    const redirect = type === 'RequestRedirect' ? decodeRedirect(flt, at, f) : undefined;
    const rewrite = type === 'URLRewrite' ? decodeRewrite(flt, at, f) : undefined;
    const mirror = type === 'RequestMirror' ? decodeMirror(flt, at, f, namespace) : undefined;
    const cors = type === 'CORS' ? decodeCors(flt, at, f) : undefined;
    out.push({
      index: i,
      type,
      ...(headers ? { headers } : {}),
      ...(redirect ? { redirect } : {}),
      ...(rewrite ? { rewrite } : {}),
      ...(mirror ? { mirror } : {}),
      ...(cors ? { cors } : {}),
    });
  }
  for (const t of NOT_REPEATABLE) {
    if (out.filter((x) => x.type === t).length > 1)
      f.add([...path, 'filters'], 'rule-violation', `${t} filter cannot be repeated`);
  }
  if (out.some((x) => x.type === 'RequestRedirect') && out.some((x) => x.type === 'URLRewrite')) {
    f.add(
      [...path, 'filters'],
      'rule-violation',
      'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
    );
  }
  if (
    out.some((x) => x.type === 'RequestRedirect') &&
    Array.isArray(rule.backendRefs) &&
    rule.backendRefs.length > 0
  ) {
    f.add(path, 'rule-violation', 'RequestRedirect filter must not be used together with backendRefs');
  }
  return exact(out);
}
