// A Duration field (GEP-2257) read as milliseconds.
import type { FieldPath } from '../diagnostic.js';
import { parseDuration } from '../duration.js';
import type { Fields, Rec } from '../fields.js';

export function durationField(parent: Rec, key: string, path: FieldPath, f: Fields): number | undefined {
  const at = [...path, key];
  const v = parent[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    f.add(at, 'wrong-type', `must be a duration string like "1s" or "500ms", got ${JSON.stringify(v)}`);
    return undefined;
  }
  const ms = parseDuration(v);
  if (ms === undefined) {
    f.add(
      at,
      'bad-format',
      `${JSON.stringify(v)} is not a GEP-2257 duration (^([0-9]{1,5}(h|m|s|ms)){1,4}$, e.g. "0s", "1s500ms")`,
    );
  }
  return ms;
}
