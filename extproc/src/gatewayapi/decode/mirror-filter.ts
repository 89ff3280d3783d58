// RequestMirror (HTTPRequestMirrorFilter): a BackendObjectReference and the share of
// requests to copy, as percent or fraction (one of them; neither means all).
import type { FieldPath } from '../diagnostic.js';
import type { Fields, Rec } from '../fields.js';
import type { MirrorSpec } from '../model.js';
import { GROUP, KIND, NAMESPACE } from '../patterns.js';

export function decodeMirror(flt: Rec, at: FieldPath, f: Fields, namespace: string): MirrorSpec | undefined {
  const m = f.rec(flt, 'requestMirror', at);
  if (!m) return undefined;
  const mat = [...at, 'requestMirror'];
  f.known(m, mat, ['backendRef', 'percent', 'fraction']);
  const ref = f.rec(m, 'backendRef', mat, true);
  const percent = f.int(m, 'percent', mat, { min: 0, max: 100 });
  const fraction = f.rec(m, 'fraction', mat);
  if (m['percent'] !== undefined && fraction)
    f.add(
      mat,
      'rule-violation',
      'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
    );
  let perMillion = 1_000_000;
  if (percent !== undefined) perMillion = percent * 10_000;
  if (fraction) {
    const fat = [...mat, 'fraction'];
    f.known(fraction, fat, ['numerator', 'denominator']);
    const numerator = f.int(fraction, 'numerator', fat, { required: true, min: 0 });
    const denominator = f.int(fraction, 'denominator', fat, { min: 1 }) ?? 100;
    if (numerator !== undefined && numerator > denominator)
      f.add(fat, 'rule-violation', 'numerator must be less than or equal to denominator');
    if (numerator !== undefined) perMillion = Math.round((numerator * 1_000_000) / denominator);
  }
  if (!ref) return undefined;
  const rat = [...mat, 'backendRef'];
  f.known(ref, rat, ['group', 'kind', 'namespace', 'name', 'port']);
  const name = f.str(ref, 'name', rat, { required: true, minLength: 1, maxLength: 253 });
  const group = f.str(ref, 'group', rat, { maxLength: 253, pattern: GROUP }) ?? '';
  const kind = f.str(ref, 'kind', rat, { minLength: 1, maxLength: 63, pattern: KIND }) ?? 'Service';
  const ns = f.str(ref, 'namespace', rat, { minLength: 1, maxLength: 63, pattern: NAMESPACE }) ?? namespace;
  const port = f.int(ref, 'port', rat, { min: 1, max: 65535 });
  if (group === '' && kind === 'Service' && ref['port'] === undefined)
    f.add(rat, 'rule-violation', 'Must have port for Service reference');
  if (name === undefined) return undefined;
  return {
    backendRef: {
      index: 0,
      group,
      kind,
      namespace: ns,
      name,
      ...(port !== undefined ? { port } : {}),
      weight: 1,
      filters: [],
    },
    perMillion,
  };
}
