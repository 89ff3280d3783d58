// Which build of the filter an Envoy gets: the native module (filter/build/libsteadfast.so,
// the wasm compiled to C and loaded as an Envoy dynamic module, with no VM on the request
// path) or steadfast.wasm. A native module is built for one Envoy version (its dynamic-module
// ABI), recorded in filter/build/native.json; any other Envoy gets the wasm.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

/** `auto`: native where it was built for this Envoy, else wasm. */
export type FilterChoice = 'auto' | 'native' | 'wasm';
export const FILTER_CHOICES: readonly FilterChoice[] = ['auto', 'native', 'wasm'];

export interface FilterBuild {
  readonly kind: 'native' | 'wasm';
  /** The file Envoy loads (absolute). */
  readonly path: string;
  /** Why `auto` chose the wasm: said once where the gateway starts. */
  readonly fallback?: string;
}

interface NativeManifest {
  readonly envoy: string;
  readonly abi: string;
}

function buildDir(): string {
  return join(projectRoot(), 'filter', 'build');
}

export function wasmFilterPath(): string {
  const path = join(buildDir(), 'steadfast.wasm');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
  return path;
}

/**
 * Why the native module cannot serve an Envoy of `envoyVersion`, or null when it can. With no
 * version (an Envoy elsewhere, whose configuration is printed here) it only has to be built.
 */
function nativeUnavailable(envoyVersion: string | undefined): string | null {
  const dir = buildDir();
  const manifestPath = join(dir, 'native.json');
  if (!existsSync(join(dir, 'libsteadfast.so')) || !existsSync(manifestPath)) {
    return 'the native module was not built (`npm run build` builds it where wasm2c and a C compiler are installed)';
  }
  let manifest: NativeManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as NativeManifest;
  } catch (err) {
    return `${manifestPath} cannot be read: ${(err as Error).message}`;
  }
  if (envoyVersion !== undefined && manifest.envoy !== envoyVersion) {
    return (
      `the native module is built for Envoy ${manifest.envoy} (dynamic-module ABI ${manifest.abi}) ` +
      `and this Envoy is ${envoyVersion}`
    );
  }
  return null;
}

/** The Envoy version the native module was built for, or null when it was not built. */
export function nativeTargetEnvoy(): string | null {
  try {
    return (JSON.parse(readFileSync(join(buildDir(), 'native.json'), 'utf8')) as NativeManifest).envoy;
  } catch {
    return null;
  }
}

/**
 * The build for an Envoy of `envoyVersion` (undefined: not known here). `native` insists (an
 * error says why it cannot be); `auto` falls back to the wasm and says why in `fallback`.
 */
export function chooseFilterBuild(choice: FilterChoice, envoyVersion: string | undefined): FilterBuild {
  if (choice === 'wasm') return { kind: 'wasm', path: wasmFilterPath() };
  const why = nativeUnavailable(envoyVersion);
  if (why === null) return { kind: 'native', path: join(buildDir(), 'libsteadfast.so') };
  if (choice === 'native') throw new Error(`the native filter cannot run: ${why}`);
  return { kind: 'wasm', path: wasmFilterPath(), fallback: `running the wasm filter: ${why}` };
}
