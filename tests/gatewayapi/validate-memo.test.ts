// Validation kept between compiles against validating whole: after every step of seeded random
// changes to a list of sources (sources added, removed, replaced, moved; duplicates made and
// undone; unknown kinds; objects with errors), ValidateMemo gives the same objects (the same
// decoded objects, in order), diagnostics and model as validateObjects with the same decoding.
import { describe, expect, it } from 'vitest';
import type { AnyObject } from '../../extproc/src/gatewayapi/model.js';
import { type SourceObject, parseConfigFiles } from '../../extproc/src/gatewayapi/parse.js';
import { type DecodeObject, validateObjects } from '../../extproc/src/gatewayapi/validate.js';
import { ValidateMemo } from '../../extproc/src/gatewayapi/validate-memo.js';
import { mulberry32 as random } from '../support/mulberry32.js';

/** A new source: a route (sometimes with an error), a Service, or a kind steadfast does not read. */
function source(rand: () => number, names: number, serial: number): SourceObject {
  const name = `r${Math.floor(rand() * names)}`;
  const pick = rand();
  const text =
    pick < 0.1
      ? `apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: ${name} }\n`
      : pick < 0.2
        ? `apiVersion: v1\nkind: Service\nmetadata: { name: ${name} }\nspec: { ports: [{ port: 80 }] }\n`
        : `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: ${name} }\nspec:\n  parentRefs: [{ name: gw }]\n  rules: [{ retry: { codes: [${pick < 0.3 ? 600 : 503}] } }]\n`;
  const parsed = parseConfigFiles([{ path: `f${serial}.yaml`, text }]);
  return parsed.objects[0] as SourceObject;
}

/** One random change to the list: what an edit, a file added or removed, or a reorder does. */
function change(list: SourceObject[], rand: () => number, make: () => SourceObject): SourceObject[] {
  const at = Math.floor(rand() * (list.length + 1));
  const pick = rand();
  const next = [...list];
  if (pick < 0.3) next.splice(at, 0, ...Array.from({ length: 1 + Math.floor(rand() * 3) }, make));
  else if (pick < 0.5) next.splice(at, 1 + Math.floor(rand() * 3));
  else if (pick < 0.8 && at < next.length) next[at] = make();
  else if (pick < 0.9 && next.length > 1) {
    const [moved] = next.splice(at, 1);
    if (moved) next.splice(Math.floor(rand() * (next.length + 1)), 0, moved);
  } else if (pick < 0.95) return next.reverse();
  return next;
}

describe('ValidateMemo', () => {
  it('gives what validateObjects gives after seeded random changes', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = random(seed);
      let serial = 0;
      // Few names make duplicates come and go; many keep them rare, so the kept path runs long.
      const names = seed % 2 === 0 ? 12 : 400;
      const make = () => source(rand, names, serial++);
      // Decoded once per source, as the incremental compiler does.
      const decoded = new WeakMap<SourceObject, AnyObject>();
      const decode: DecodeObject = (src, d) => {
        let obj = decoded.get(src);
        if (!obj) decoded.set(src, (obj = d(src)));
        return obj;
      };
      const memo = new ValidateMemo();
      let list = Array.from({ length: 20 }, make);
      for (let step = 0; step < 60; step++) {
        const kept = memo.validate(list, decode);
        const whole = validateObjects(list, decode);
        const where = `seed ${seed} step ${step}`;
        expect(kept.objects.length, where).toBe(whole.objects.length);
        kept.objects.forEach((o, i) => expect(o, `${where} object ${i}`).toBe(whole.objects[i]));
        expect(kept.diagnostics, where).toEqual(whole.diagnostics);
        expect(kept.model, where).toEqual(whole.model);
        list = change(list, rand, make);
      }
    }
  });

  it('validates only the sources that changed: an edit, an addition, a removal, a name back', () => {
    const route = (name: string, code: number, serial: number) =>
      parseConfigFiles([
        {
          path: `f${serial}.yaml`,
          text: `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: ${name} }\nspec:\n  parentRefs: [{ name: gw }]\n  rules: [{ retry: { codes: [${code}] } }]\n`,
        },
      ]).objects[0] as SourceObject;
    const memo = new ValidateMemo();
    const decode: DecodeObject = (src, d) => d(src);
    let list = Array.from({ length: 100 }, (_, i) => route(`r${i}`, 503, i));
    // Each step from the list before it: one route edited, one added, that one removed, and added again.
    const steps: [string, (list: SourceObject[]) => SourceObject[]][] = [
      ['edited', (l) => l.map((s, i) => (i === 50 ? route('r50', 600, 1000) : s))],
      ['added', (l) => [route('new', 503, 2000), ...l]],
      ['removed', (l) => l.slice(1)],
      ['added again', (l) => [route('new', 503, 3000), ...l]],
    ];
    memo.validate(list, decode);
    expect(memo.validated).toBe(100);
    for (const [what, step] of steps) {
      const next = step(list);
      const kept = memo.validate(next, decode);
      expect(memo.validated, what).toBe(what === 'removed' ? 0 : 1);
      expect(kept.diagnostics, what).toEqual(validateObjects(next, decode).diagnostics);
      list = next;
    }
  });
});
