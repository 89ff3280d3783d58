// Which hostnames a change of a port's route list touched, found without grouping every route
// by hostname: the IR's virtual hosts (port-hosts-memo.ts) and the resolver's buckets
// (resolve/compile.ts) are both rebuilt for those hostnames alone.
import type { ServedRoute } from './gateway-ir.js';

/**
 * The hostnames of the routes one list has and the other has not (the same route objects),
 * looked for between the longest same start and the longest same end of the two: every other
 * hostname has the same routes in the same order, if the routes both have are in the same
 * order. Undefined when they are not, or when more than `max` hostnames are touched (the caller
 * looks at the whole port then).
 */
export function touchedHostnames(
  before: readonly ServedRoute[],
  after: readonly ServedRoute[],
  max: number,
): Set<string> | undefined {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && (before[start] as ServedRoute).route === (after[start] as ServedRoute).route)
    start++;
  let end = 0;
  while (
    end < shorter - start &&
    (before[before.length - 1 - end] as ServedRoute).route ===
      (after[after.length - 1 - end] as ServedRoute).route
  )
    end++;
  const gone = before.slice(start, before.length - end);
  const come = after.slice(start, after.length - end);
  const inGone = new Set(gone.map((r) => r.route));
  const inCome = new Set(come.map((r) => r.route));
  const keptBefore = gone.filter((r) => inCome.has(r.route));
  const keptAfter = come.filter((r) => inGone.has(r.route));
  if (keptBefore.length !== keptAfter.length || keptBefore.some((r, i) => r.route !== keptAfter[i]?.route))
    return undefined;
  const touched = new Set<string>();
  for (const r of gone) if (!inCome.has(r.route)) for (const h of r.route.hostnames) touched.add(h);
  for (const r of come) if (!inGone.has(r.route)) for (const h of r.route.hostnames) touched.add(h);
  return touched.size > max ? undefined : touched;
}
