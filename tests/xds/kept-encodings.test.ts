// KeptEncodings gives the resource a fresh encoding gives, for the same object, for a new object
// of the same JSON and for changed JSON, across generations; takes over an encoding only from
// this generation or the last; and never keeps what could not be encoded.
import { describe, expect, it } from 'vitest';
import { TYPE_CLUSTER, TYPE_LISTENER } from '../../extproc/src/envoy/envoy-names.js';
import { resource } from '../../extproc/src/xds/ads-resource.js';
import { encodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { KeptEncodings } from '../../extproc/src/xds/kept-encodings.js';
import { pick, rng } from '../resolve/random-table.js';

type Json = Record<string, unknown>;

const cluster = (name: string, timeout: string): Json => ({ name, connect_timeout: timeout, type: 'STATIC' });
const fresh = (type: string, name: string, json: Json) =>
  resource(name, encodeAny({ '@type': type, ...json }, `${type}/${name}`));

describe('KeptEncodings', () => {
  for (const seed of [1, 2, 3]) {
    it(`gives what a fresh encoding gives, generation after generation (seed ${seed})`, () => {
      const rnd = rng(seed);
      const kept = new KeptEncodings();
      let objects: Json[] = [cluster('a', '1s'), cluster('b', '2s')];
      for (let g = 0; g < 60; g++) {
        kept.rotate();
        objects = objects.map((o) => {
          const r = rnd();
          if (r < 0.2) return structuredClone(o);
          if (r < 0.35) return cluster(o['name'] as string, pick(rnd, ['1s', '2s', '3s']));
          return o;
        });
        for (const o of objects) {
          const name = o['name'] as string;
          expect(kept.resource(TYPE_CLUSTER, name, o)).toEqual(fresh(TYPE_CLUSTER, name, o));
        }
      }
    });
  }

  it('takes over an encoding of the same JSON from this generation or the last only', () => {
    const kept = new KeptEncodings();
    const first = kept.resource(TYPE_CLUSTER, 'a', cluster('a', '1s'));
    kept.rotate();
    expect(kept.resource(TYPE_CLUSTER, 'a', cluster('a', '1s'))).toBe(first);
    kept.rotate();
    kept.rotate();
    // Two generations without it: let go, encoded again.
    const again = kept.resource(TYPE_CLUSTER, 'a', cluster('a', '1s'));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('tells types apart, and keeps nothing it could not encode', () => {
    const kept = new KeptEncodings();
    const json = { name: 'x' };
    expect(kept.resource(TYPE_LISTENER, 'x', json)).toEqual(fresh(TYPE_LISTENER, 'x', json));
    expect(kept.resource(TYPE_CLUSTER, 'x', json)).toEqual(fresh(TYPE_CLUSTER, 'x', json));
    const bad = { name: 'y', no_such_field: 1 };
    expect(() => kept.resource(TYPE_CLUSTER, 'y', bad)).toThrow(/no_such_field/);
    expect(() => kept.resource(TYPE_CLUSTER, 'y', bad)).toThrow(/no_such_field/);
  });
});
