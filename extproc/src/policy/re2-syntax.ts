// Envoy matches regular expressions with RE2, which has no lookaround, backreferences or
// atomic groups. One such expression would make Envoy refuse the whole route
// configuration, so gateway mode leaves a match that uses them out (with a warning), and
// translation reports it on its route (PartiallyInvalid): the other routes keep working, and
// requests it would have matched fall to the next route.

import type { TableMatch } from './policy-table.js';

const UNSUPPORTED = /\(\?<?[=!]|\(\?>|\\[1-9]|\\k<|[*+?}]\+/;

/** The reason RE2 would refuse `source`, or undefined when it looks acceptable. */
function re2Incompatibility(source: string): string | undefined {
  const m = UNSUPPORTED.exec(source);
  if (!m) return undefined;
  return `regular expression "${source}" uses "${m[0]}", which RE2 (Envoy's regex engine) does not support`;
}

/** The first RE2 problem among a match's regular expressions (path, headers, query params). */
export function matchRe2Problem(match: TableMatch): string | undefined {
  const regexes = [
    ...(match.path.type === 'RegularExpression' ? [match.path.value] : []),
    ...[...match.headers, ...match.queryParams]
      .filter((m) => m.type === 'RegularExpression')
      .map((m) => m.value),
  ];
  for (const r of regexes) {
    const problem = re2Incompatibility(r);
    if (problem !== undefined) return `${match.id}: ${problem}`;
  }
  return undefined;
}
