// RequestRedirect and URLRewrite (HTTPRequestRedirectFilter, HTTPURLRewriteFilter,
// HTTPPathModifier): the schema's enums, bounds and CEL rules, and the rule-level CEL rules
// that a prefix replacement (the rule's or a backendRef's) needs exactly one PathPrefix match.
import type { FieldPath } from '../diagnostic.js';
import type { Fields, Rec } from '../fields.js';
import type { HttpRouteMatch, RouteFilter } from '../model.js';
import type { TablePathModifier, TableRedirect, TableRewrite } from '../../policy/route-filters.js';
import { PRECISE_HOSTNAME } from '../patterns.js';

const STATUS_CODES = [301, 302, 303, 307, 308] as const;

function decodePathModifier(parent: Rec, at: FieldPath, f: Fields): TablePathModifier | undefined {
  const p = f.rec(parent, 'path', at);
  if (!p) return undefined;
  const pat = [...at, 'path'];
  f.known(p, pat, ['type', 'replaceFullPath', 'replacePrefixMatch']);
  const type = f.str(p, 'type', pat, { required: true, enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] });
  const full = f.str(p, 'replaceFullPath', pat, { maxLength: 1024 });
  const prefix = f.str(p, 'replacePrefixMatch', pat, { maxLength: 1024 });
  // The four CEL rules of HTTPPathModifier.
  if (type === 'ReplaceFullPath' && p['replaceFullPath'] === undefined)
    f.add(pat, 'rule-violation', "replaceFullPath must be specified when type is set to 'ReplaceFullPath'");
  if (p['replaceFullPath'] !== undefined && type !== 'ReplaceFullPath')
    f.add(pat, 'rule-violation', "type must be 'ReplaceFullPath' when replaceFullPath is set");
  if (type === 'ReplacePrefixMatch' && p['replacePrefixMatch'] === undefined)
    f.add(
      pat,
      'rule-violation',
      "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
    );
  if (p['replacePrefixMatch'] !== undefined && type !== 'ReplacePrefixMatch')
    f.add(pat, 'rule-violation', "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set");
  if (type === 'ReplaceFullPath' && full !== undefined) return { type, value: full };
  if (type === 'ReplacePrefixMatch' && prefix !== undefined) return { type, value: prefix };
  return undefined;
}

export function decodeRedirect(flt: Rec, at: FieldPath, f: Fields): TableRedirect | undefined {
  const r = f.rec(flt, 'requestRedirect', at);
  if (!r) return undefined;
  const rat = [...at, 'requestRedirect'];
  f.known(r, rat, ['scheme', 'hostname', 'path', 'port', 'statusCode']);
  const scheme = f.str(r, 'scheme', rat, { enum: ['http', 'https'] }) as TableRedirect['scheme'];
  const hostname = f.str(r, 'hostname', rat, { minLength: 1, maxLength: 253, pattern: PRECISE_HOSTNAME });
  const port = f.int(r, 'port', rat, { min: 1, max: 65535 });
  const code = f.int(r, 'statusCode', rat, {}) ?? 302;
  if (!(STATUS_CODES as readonly number[]).includes(code)) {
    f.add([...rat, 'statusCode'], 'not-in-enum', `${code} is not one of ${STATUS_CODES.join(', ')}`);
  }
  const path = decodePathModifier(r, rat, f);
  return {
    ...(scheme !== undefined ? { scheme } : {}),
    ...(hostname !== undefined ? { hostname } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(path ? { path } : {}),
    statusCode: code as TableRedirect['statusCode'],
  };
}

export function decodeRewrite(flt: Rec, at: FieldPath, f: Fields): TableRewrite | undefined {
  const r = f.rec(flt, 'urlRewrite', at);
  if (!r) return undefined;
  const rat = [...at, 'urlRewrite'];
  f.known(r, rat, ['hostname', 'path']);
  const hostname = f.str(r, 'hostname', rat, { minLength: 1, maxLength: 253, pattern: PRECISE_HOSTNAME });
  const path = decodePathModifier(r, rat, f);
  return { ...(hostname !== undefined ? { hostname } : {}), ...(path ? { path } : {}) };
}

/** Whether a rule's matches let a prefix replacement find its prefix: one PathPrefix match (the default). */
function onePathPrefix(matches: readonly HttpRouteMatch[], rule: Rec): boolean {
  return rule['matches'] === undefined || (matches.length === 1 && matches[0]?.path.type === 'PathPrefix');
}

const PREFIX_FILTERS = [
  ['RequestRedirect', (x: RouteFilter) => x.redirect?.path?.type === 'ReplacePrefixMatch'],
  ['URLRewrite', (x: RouteFilter) => x.rewrite?.path?.type === 'ReplacePrefixMatch'],
] as const;

type PrefixFilterUse = (typeof PREFIX_FILTERS)[number][1];

/** The HTTPRouteRule a prefix replacement is checked in: its decoded matches, the rule, where it is. */
export interface PrefixRule {
  readonly matches: readonly HttpRouteMatch[];
  readonly rule: Rec;
  readonly path: FieldPath;
}

/** One violation per filter type `applies` to, unless the rule's matches are one PathPrefix. */
function prefixViolations(
  where: PrefixRule,
  f: Fields,
  applies: (uses: PrefixFilterUse) => boolean,
  message: (type: (typeof PREFIX_FILTERS)[number][0]) => string,
): void {
  if (onePathPrefix(where.matches, where.rule)) return;
  for (const [type, uses] of PREFIX_FILTERS) {
    if (applies(uses)) f.add(where.path, 'rule-violation', message(type));
  }
}

/**
 * The HTTPRouteRule CEL rule: a RequestRedirect or URLRewrite with path.replacePrefixMatch
 * needs exactly one match, and that a PathPrefix one (a rule without matches has the
 * schema's default, one PathPrefix "/").
 */
export function checkPrefixReplacement(filters: readonly RouteFilter[], where: PrefixRule, f: Fields): void {
  prefixViolations(
    where,
    f,
    (uses) => filters.some(uses),
    (type) =>
      `When using ${type} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`,
  );
}

/**
 * The same CEL rule for the backendRefs' filters. As upstream writes it (`exists_one`), it
 * holds when exactly one backendRef has such a filter; translate fails the others closed.
 */
export function checkBackendPrefixReplacement(
  backendRefs: readonly { readonly filters: readonly RouteFilter[] }[],
  where: PrefixRule,
  f: Fields,
): void {
  prefixViolations(
    where,
    f,
    (uses) => backendRefs.filter((b) => b.filters.some(uses)).length === 1,
    // Upstream's two messages differ in the case of "when"; each is kept as the API server says it.
    (type) =>
      `Within backendRefs, ${type === 'RequestRedirect' ? 'when' : 'When'} using ${type} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`,
  );
}
