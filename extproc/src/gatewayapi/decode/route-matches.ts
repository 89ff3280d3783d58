// HTTPRoute and GRPCRoute matches, with the CEL rules on path values and gRPC names.
import type { FieldPath } from '../diagnostic.js';
import { type Fields, type Rec, exact } from '../fields.js';
import type { GrpcRouteMatch, HeaderMatch, HttpRouteMatch } from '../model.js';
import { GRPC_METHOD, GRPC_SERVICE, PATH_CHARS, TOKEN } from '../patterns.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

/** Reports an invalid regular expression; false when it cannot be compiled. */
function checkRegex(value: string, at: FieldPath, f: Fields): boolean {
  try {
    new RegExp(value);
    return true;
  } catch (e) {
    f.add(
      at,
      'bad-format',
      `${JSON.stringify(value)} is not a valid regular expression: ${(e as Error).message}`,
    );
    return false;
  }
}

function decodeStringMatches(
  parent: Rec,
  key: string,
  path: FieldPath,
  f: Fields,
  maxValue: number,
): readonly HeaderMatch[] {
  const out: HeaderMatch[] = [];
  const names = new Set<string>();
  for (const [m, i] of f.recs(parent, key, path, { max: 16 })) {
    const at = [...path, key, i];
    f.known(m, at, ['type', 'name', 'value']);
    const type = (f.str(m, 'type', at, { enum: ['Exact', 'RegularExpression'] }) ??
      'Exact') as HeaderMatch['type'];
    const name = f.str(m, 'name', at, { required: true, minLength: 1, maxLength: 256, pattern: TOKEN });
    const value = f.str(m, 'value', at, { required: true, minLength: 1, maxLength: maxValue });
    if (type === 'RegularExpression' && value !== undefined && !checkRegex(value, [...at, 'value'], f))
      continue;
    if (name === undefined || value === undefined) continue;
    // listType=map keyed by name: header names compare case-insensitively, query names exactly.
    const dedupe = key === 'queryParams' ? name : name.toLowerCase();
    if (names.has(dedupe)) {
      f.add(
        [...at, 'name'],
        'rule-violation',
        `duplicate ${key === 'queryParams' ? 'query param' : 'header'} match ${JSON.stringify(name)}`,
      );
      continue;
    }
    names.add(dedupe);
    out.push({ type, name, value });
  }
  return exact(out);
}

/** Reports what the CEL rules reject; false only when the path cannot be matched at all. */
function checkPath(type: string, value: string, at: FieldPath, f: Fields): boolean {
  if (type === 'RegularExpression') return checkRegex(value, at, f);
  const problems: [boolean, string][] = [
    [
      !value.startsWith('/'),
      "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
    ],
    [value.includes('//'), "must not contain '//' when type one of ['Exact', 'PathPrefix']"],
    [value.includes('/./'), "must not contain '/./' when type one of ['Exact', 'PathPrefix']"],
    [value.includes('/../'), "must not contain '/../' when type one of ['Exact', 'PathPrefix']"],
    [
      value.includes('%2f') || value.includes('%2F'),
      "must not contain '%2f' or '%2F' when type one of ['Exact', 'PathPrefix']",
    ],
    [value.includes('#'), "must not contain '#' when type one of ['Exact', 'PathPrefix']"],
    [value.endsWith('/..'), "must not end with '/..' when type one of ['Exact', 'PathPrefix']"],
    [value.endsWith('/.'), "must not end with '/.' when type one of ['Exact', 'PathPrefix']"],
    [
      !PATH_CHARS.test(value),
      `must only contain valid characters (matching ${PATH_CHARS.source}) for types ['Exact', 'PathPrefix']`,
    ],
  ];
  for (const [bad, message] of problems) if (bad) f.add(at, 'rule-violation', message);
  return true;
}

export function decodeHttpMatches(rule: Rec, path: FieldPath, f: Fields): readonly HttpRouteMatch[] {
  const out: HttpRouteMatch[] = [];
  const raw = f.recs(rule, 'matches', path, { max: 64 });
  // Default: one PathPrefix "/" match.
  if (rule.matches === undefined)
    return [{ index: 0, path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] }];
  for (const [m, i] of raw) {
    const at = [...path, 'matches', i];
    // A match with schema errors is kept while it can still be matched, so its failing rule
    // catches those requests and answers 500 (fail closed) instead of letting them fall through.
    f.known(m, at, ['path', 'headers', 'queryParams', 'method']);
    const p = f.rec(m, 'path', at) ?? {};
    f.known(p, [...at, 'path'], ['type', 'value']);
    const rawType = p.type;
    const type = (f.str(p, 'type', [...at, 'path'], { enum: ['Exact', 'PathPrefix', 'RegularExpression'] }) ??
      'PathPrefix') as HttpRouteMatch['path']['type'];
    const value = f.str(p, 'value', [...at, 'path'], { maxLength: 1024 }) ?? '/';
    const matchable = checkPath(type, value, [...at, 'path', 'value'], f);
    const method = f.str(m, 'method', at, { enum: METHODS });
    const headers = decodeStringMatches(m, 'headers', at, f, 4096);
    const queryParams = decodeStringMatches(m, 'queryParams', at, f, 1024);
    // Never widen a match by dropping one of its conditions.
    const count = (k: string) => (Array.isArray(m[k]) ? (m[k] as unknown[]).length : 0);
    const complete =
      (m.method === undefined || method !== undefined) &&
      headers.length === count('headers') &&
      queryParams.length === count('queryParams');
    if (!matchable || !complete || (rawType !== undefined && rawType !== type)) continue;
    out.push({
      index: i,
      path: { type, value },
      ...(method !== undefined ? { method } : {}),
      headers,
      queryParams,
    });
  }
  return exact(out);
}

export function decodeGrpcMatches(rule: Rec, path: FieldPath, f: Fields): readonly GrpcRouteMatch[] {
  const out: GrpcRouteMatch[] = [];
  const raw = f.recs(rule, 'matches', path, { max: 64 });
  if (rule.matches === undefined) return [{ index: 0, headers: [] }];
  for (const [m, i] of raw) {
    const at = [...path, 'matches', i];
    f.known(m, at, ['method', 'headers']);
    let method: GrpcRouteMatch['method'];
    const mm = f.rec(m, 'method', at);
    if (mm) {
      const mat = [...at, 'method'];
      f.known(mm, mat, ['type', 'service', 'method']);
      const type = (f.str(mm, 'type', mat, { enum: ['Exact', 'RegularExpression'] }) ?? 'Exact') as
        'Exact' | 'RegularExpression';
      const service = f.str(mm, 'service', mat, { maxLength: 1024 });
      const meth = f.str(mm, 'method', mat, { maxLength: 1024 });
      if (!service && !meth) {
        f.add(mat, 'rule-violation', "One or both of 'service' or 'method' must be specified");
        continue;
      }
      if (type === 'Exact') {
        if (service && !GRPC_SERVICE.test(service)) {
          f.add(
            [...mat, 'service'],
            'rule-violation',
            `service must only contain valid characters (matching ${GRPC_SERVICE.source})`,
          );
        }
        if (meth && !GRPC_METHOD.test(meth)) {
          f.add(
            [...mat, 'method'],
            'rule-violation',
            `method must only contain valid characters (matching ${GRPC_METHOD.source})`,
          );
        }
      } else if (
        (service && !checkRegex(service, [...mat, 'service'], f)) ||
        (meth && !checkRegex(meth, [...mat, 'method'], f))
      ) {
        continue;
      }
      method = { type, ...(service ? { service } : {}), ...(meth ? { method: meth } : {}) };
    }
    const headers = decodeStringMatches(m, 'headers', at, f, 4096);
    if (Array.isArray(m.headers) && headers.length !== m.headers.length) continue;
    out.push({ index: i, ...(method ? { method } : {}), headers });
  }
  return exact(out);
}
