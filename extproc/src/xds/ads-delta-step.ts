// A delta push worked out once for every stream making the same step. Most delta streams hold
// exactly a generation's resources of a type (every wildcard type; the virtual hosts of a stream
// that asked for every route configuration): the same shared map, built once per generation and
// kind of Envoy. The step from one such map to the next is the same for all of them, so it is
// worked out once and kept on the newer map (a WeakMap: it goes with the generation), not
// once per stream over 10,000 resources.
import type { Any, Resource } from './ads-resource.js';

export interface DeltaPush {
  readonly resources: readonly { name: string; version: string; resource: Any }[];
  readonly removed_resources: readonly string[];
}

/** A generation's resources of one type, whole: shared by the streams, never changed. */
export type Whole = ReadonlyMap<string, Resource>;

/** Newer map → older map → the push from the older to the newer. */
const steps = new WeakMap<Whole, WeakMap<Whole, DeltaPush>>();

/** The push that brings a stream holding `older` to `newer`, worked out once per pair. */
export function step(older: Whole, newer: Whole): DeltaPush {
  let from = steps.get(newer);
  if (!from) steps.set(newer, (from = new WeakMap()));
  let push = from.get(older);
  if (!push) {
    push = workedOut(older, newer);
    from.set(older, push);
  }
  return push;
}

/**
 * Records the step from `older` to `newer` where the caller knows what differs: every name but
 * those of `candidates` (newer's resources, in its order) and `lost` (older's names, in its
 * order) has the same resource object in both. step() then gives what working it out would,
 * without a pass over every resource (ads-routes.ts: one changed virtual host among 10,000).
 */
export function knownStep(
  older: Whole,
  newer: Whole,
  candidates: readonly Resource[],
  lost: readonly string[],
): void {
  const changed = candidates.filter((r) => {
    const was = older.get(r.name);
    return was !== r && was?.hash !== r.hash;
  });
  let from = steps.get(newer);
  if (!from) steps.set(newer, (from = new WeakMap()));
  from.set(
    older,
    deltaPush(
      changed,
      lost.filter((n) => !newer.has(n)),
    ),
  );
}

/** The step itself: one pass over the newer map, and one over the older only when it lost names. */
function workedOut(older: Whole, newer: Whole): DeltaPush {
  const changed: Resource[] = [];
  let kept = 0;
  for (const r of newer.values()) {
    const was = older.get(r.name);
    if (was !== undefined) kept++;
    // The same object is the same resource (encodings are kept across generations); else the hash says.
    if (was !== r && was?.hash !== r.hash) changed.push(r);
  }
  const removed = kept === older.size ? [] : [...older.keys()].filter((n) => !newer.has(n));
  return deltaPush(changed, removed);
}

export function deltaPush(changed: readonly Resource[], removed: readonly string[]): DeltaPush {
  return {
    resources: changed.map((r) => ({ name: r.name, version: r.hash, resource: r.any })),
    removed_resources: removed,
  };
}

/** Whether a stream's selection is a generation's whole type (else a list of its own). */
export function isWhole(selected: readonly Resource[] | Whole): selected is Whole {
  return selected instanceof Map;
}
