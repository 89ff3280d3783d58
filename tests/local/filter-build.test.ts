// Which build of the filter a gateway gets (extproc/src/local/filter-build.ts), against the
// real filter/build/ that `npm test` builds: native only for the Envoy it was built for.
import { describe, expect, it } from 'vitest';
import { chooseFilterBuild, nativeTargetEnvoy } from '../../extproc/src/local/filter-build.js';
import { pinnedToolVersions } from '../../extproc/src/local/envoy-binary.js';

describe('choosing the filter build', () => {
  const pinned = pinnedToolVersions().envoy;

  it('the native module names the pinned Envoy as its target', () => {
    expect(nativeTargetEnvoy()).toBe(pinned);
  });

  it('auto and native give the native module for the Envoy it was built for', () => {
    for (const choice of ['auto', 'native'] as const) {
      const build = chooseFilterBuild(choice, pinned);
      expect(build.kind).toBe('native');
      expect(build.path).toMatch(/filter\/build\/libsteadfast\.so$/);
      expect(build.fallback).toBeUndefined();
    }
  });

  it('auto falls back to the wasm for another Envoy, and says why', () => {
    const build = chooseFilterBuild('auto', '1.39.2');
    expect(build.kind).toBe('wasm');
    expect(build.path).toMatch(/filter\/build\/steadfast\.wasm$/);
    expect(build.fallback).toBe(
      `running the wasm filter: the native module is built for Envoy ${pinned} (dynamic-module ABI v0.2.0) and this Envoy is 1.39.2`,
    );
  });

  it('native refuses another Envoy with the same reason', () => {
    expect(() => chooseFilterBuild('native', '1.39.2')).toThrow(
      `the native filter cannot run: the native module is built for Envoy ${pinned} (dynamic-module ABI v0.2.0) and this Envoy is 1.39.2`,
    );
  });

  it('wasm is the wasm, whatever the Envoy', () => {
    expect(chooseFilterBuild('wasm', pinned)).toMatchObject({ kind: 'wasm' });
  });
});
