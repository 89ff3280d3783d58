// Random route rules for the property tests that compare the resolver with its ordered
// virtual hosts and with the generated Envoy routes: one seeded generator, so a failure
// reproduces.
import type { StringMatch, TableMatch } from '../../extproc/src/policy/policy-table.js';
import type { MatchSpec } from './table-builder.js';

/** A seeded linear congruential generator in [0, 1). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

export const HOSTS = ['a.example.com', 'b.example.com', '*.example.com', '*.x.example.com', '*'];

export interface RandomRulesOptions {
  /** Path segments the matches are made of, e.g. `a/b`. */
  readonly segments: readonly string[];
  /** At most this many matches per rule (at least one). */
  readonly maxMatches: number;
}

/** 1–3 rules, each with its matches: exact, prefix or regex paths, sometimes headers, query, method. */
export function randomRules(rand: () => number, options: RandomRulesOptions): MatchSpec[][] {
  const rules: MatchSpec[][] = [];
  for (let r = 0; r < 1 + Math.floor(rand() * 3); r++) {
    const matches: MatchSpec[] = [];
    for (let m = 0; m < 1 + Math.floor(rand() * options.maxMatches); m++) {
      const seg = pick(rand, options.segments);
      const kind = pick(rand, ['Exact', 'PathPrefix', 'PathPrefix', 'RegularExpression'] as const);
      const path: TableMatch['path'] =
        kind === 'RegularExpression'
          ? { type: kind, value: `/${seg}[0-9]*` }
          : { type: kind, value: `/${seg}` };
      const headers: StringMatch[] =
        rand() < 0.3 ? [{ type: 'Exact', name: 'x-v', value: pick(rand, ['1', '2']) }] : [];
      const queryParams: StringMatch[] = rand() < 0.2 ? [{ type: 'Exact', name: 'q', value: '1' }] : [];
      matches.push({
        path,
        headers,
        queryParams,
        ...(rand() < 0.3 ? { method: pick(rand, ['GET', 'POST']) } : {}),
      });
    }
    rules.push(matches);
  }
  return rules;
}
