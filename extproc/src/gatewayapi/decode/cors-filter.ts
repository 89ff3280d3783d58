// CORS (HTTPCORSFilter, GEP-1767): the schema's patterns, limits, set semantics and CEL rules
// ('*' only alone), and its default (maxAge 5).
import type { FieldPath } from '../diagnostic.js';
import type { Fields, Rec } from '../fields.js';
import type { TableCors } from '../../policy/route-filters.js';
import { TOKEN } from '../patterns.js';

/** CORSOrigin: `*`, or a scheme, a host (a leading `*.` or `*` alone allowed) and an optional port. */
const CORS_ORIGIN = /(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)/;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*'];

/**
 * One set-typed list of strings: each item checked, duplicates reported as the API server
 * does for `listType=set`, and `*` refused beside other values (the CEL rule).
 */
function stringSet(
  cors: Rec,
  key: string,
  at: FieldPath,
  f: Fields,
  max: number,
  check: (v: unknown, i: number) => string | undefined,
  options: { readonly wildcardAlone?: string } = {},
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  f.list(cors, key, at, { max }).forEach((item, i) => {
    const v = check(item, i);
    if (v === undefined) return;
    if (seen.has(v)) {
      f.add([...at, key, i], 'rule-violation', `Duplicate value: ${JSON.stringify(v)}`);
      return;
    }
    seen.add(v);
    out.push(v);
  });
  if (options.wildcardAlone !== undefined && out.includes('*') && out.length > 1) {
    f.add(
      [...at, key],
      'rule-violation',
      `${key} cannot contain '*' alongside other ${options.wildcardAlone}`,
    );
  }
  return out;
}

export function decodeCors(flt: Rec, at: FieldPath, f: Fields): TableCors | undefined {
  const cors = f.rec(flt, 'cors', at);
  if (!cors) return undefined;
  const cat = [...at, 'cors'];
  f.known(cors, cat, [
    'allowOrigins',
    'allowCredentials',
    'allowMethods',
    'allowHeaders',
    'exposeHeaders',
    'maxAge',
  ]);
  const allowOrigins = stringSet(
    cors,
    'allowOrigins',
    cat,
    f,
    64,
    (v, i) => {
      const at = [...cat, 'allowOrigins', i];
      const origin = f.checkStr(v, at, { minLength: 1, maxLength: 253, pattern: CORS_ORIGIN });
      const port = origin?.match(/:([0-9]+)$/)?.[1];
      if (origin !== undefined && port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
        f.add(at, 'out-of-range', `port ${port} is not in 1-65535`);
        return undefined;
      }
      return origin;
    },
    { wildcardAlone: 'origins' },
  );
  const allowMethods = stringSet(
    cors,
    'allowMethods',
    cat,
    f,
    9,
    (v, i) => f.checkStr(v, [...cat, 'allowMethods', i], { enum: METHODS }),
    { wildcardAlone: 'methods' },
  );
  // A set compares values exactly, as the API server does (X-A and x-a are two).
  const header = (key: string) => (v: unknown, i: number) =>
    f.checkStr(v, [...cat, key, i], { minLength: 1, maxLength: 256, pattern: TOKEN });
  const allowHeaders = stringSet(cors, 'allowHeaders', cat, f, 64, header('allowHeaders'), {
    wildcardAlone: 'headers',
  });
  const exposeHeaders = stringSet(cors, 'exposeHeaders', cat, f, 64, header('exposeHeaders'));
  const allowCredentials = f.bool(cors, 'allowCredentials', cat) ?? false;
  const maxAge = f.int(cors, 'maxAge', cat, { min: 1, max: 2_147_483_647 }) ?? 5;
  return { allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials, maxAge };
}
