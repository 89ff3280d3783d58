// Builds small PolicyTables by hand for resolver tests (no Gateway API objects involved).
import type {
  PolicyTable,
  StringMatch,
  TableMatch,
  TableRoute,
  TableRule,
} from '../../extproc/src/policy/policy-table.js';

export interface MatchSpec {
  readonly path?: TableMatch['path'];
  readonly method?: string;
  readonly headers?: readonly StringMatch[];
  readonly queryParams?: readonly StringMatch[];
  readonly grpc?: TableMatch['grpc'];
}

export interface RouteSpec {
  readonly name: string;
  readonly kind?: 'http' | 'grpc';
  readonly hostnames?: readonly string[];
  /** One entry per rule: its matches. */
  readonly rules: readonly (readonly MatchSpec[])[];
  readonly invalidRules?: readonly number[];
}

export function route(spec: RouteSpec): TableRoute {
  const kind = spec.kind ?? 'http';
  const id = `${kind}route/default/${spec.name}`;
  const rules: TableRule[] = spec.rules.map((matches, i) => {
    const ruleId = `${id}/rule/${i}`;
    return {
      id: ruleId,
      index: i,
      matches: matches.map((m, j) => ({
        id: `${ruleId}/match/${j}`,
        path: m.path ?? { type: 'PathPrefix', value: '/' },
        ...(m.method !== undefined ? { method: m.method } : {}),
        headers: m.headers ?? [],
        queryParams: m.queryParams ?? [],
        ...(m.grpc ? { grpc: m.grpc } : {}),
      })),
      backends: [],
      policy: { rule: ruleId, kind },
      token: `sf1;id=${ruleId}`,
      ...(spec.invalidRules?.includes(i)
        ? { invalid: { reason: 'UnsupportedValue', message: 'broken' } }
        : {}),
    };
  });
  return {
    id,
    kind,
    namespace: 'default',
    name: spec.name,
    listeners: [],
    hostnames: spec.hostnames ?? ['*'],
    rules,
  };
}

/** Routes in the order given: that order is the table's precedence order (oldest first). */
export function table(...routes: TableRoute[]): PolicyTable {
  return { version: 1, listeners: [], routes };
}

export const prefix = (value: string): TableMatch['path'] => ({ type: 'PathPrefix', value });
export const exact = (value: string): TableMatch['path'] => ({ type: 'Exact', value });
export const regex = (value: string): TableMatch['path'] => ({ type: 'RegularExpression', value });
export const header = (name: string, value: string, type: StringMatch['type'] = 'Exact'): StringMatch => ({
  type,
  name,
  value,
});
