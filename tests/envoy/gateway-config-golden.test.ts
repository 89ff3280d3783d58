// Golden tests for gateway mode: every testdata/*.in.yaml (Gateway API objects) is compiled
// and turned into an Envoy configuration, compared with *.out.yaml. UPDATE_GOLDEN=1
// rewrites the outputs and deletes stale ones. Every output must pass `envoy --mode validate`.
import { existsSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { objectText } from '../../extproc/src/cli/status-text.js';
import { formatDiagnostic } from '../../extproc/src/gatewayapi/diagnostic.js';
import { envoyYaml } from '../../extproc/src/envoy/envoy-yaml.js';
import { generateGatewayConfig, generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { isHealthy } from '../../extproc/src/translate/status.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const update = process.env['UPDATE_GOLDEN'] === '1';
const inputs = readdirSync(dir)
  .filter((f) => f.endsWith('.in.yaml'))
  .sort();

/** A fixed, published test key: golden outputs must not change from run to run. */
export const GOLDEN_SESSION_KEY = Buffer.alloc(32, 7).toString('base64');

function render(name: string, text: string): string {
  const snap = compileSnapshot([{ path: name, text }]);
  const options = { wasmPath: 'filter/build/steadfast.wasm', sessionKeys: [GOLDEN_SESSION_KEY] };
  const config = generateGatewayConfig(snap.ir, options);
  // The input's problems head the output, so a change in what is accepted shows in the diff.
  const problems = [
    ...snap.diagnostics.map(formatDiagnostic),
    ...snap.statuses.filter((o) => !isHealthy(o)).flatMap((o) => objectText(o).split('\n')),
    ...generateGatewayResources(snap.ir, options).warnings.map((w) => `generator warning: ${w}`),
  ];
  return envoyYaml(
    config,
    problems.length === 0
      ? 'input: no problems'
      : ['input problems (as steadfast validate shows them):', ...problems].join('\n'),
  );
}

describe('gateway config golden: testdata/*.in.yaml → *.out.yaml', () => {
  it('has inputs', () => expect(inputs.length).toBeGreaterThan(0));

  it('has no stale outputs', () => {
    const stale = readdirSync(dir)
      .filter((f) => f.endsWith('.out.yaml'))
      .filter((f) => !inputs.includes(f.replace(/\.out\.yaml$/, '.in.yaml')));
    if (update) for (const f of stale) unlinkSync(join(dir, f));
    else expect(stale, 'outputs without an input (run with UPDATE_GOLDEN=1 to delete)').toEqual([]);
  });

  for (const input of inputs) {
    const name = input.replace(/\.in\.yaml$/, '');
    const outPath = join(dir, `${name}.out.yaml`);
    it(`${name}: matches its golden output`, () => {
      const got = render(input, readFileSync(join(dir, input), 'utf8'));
      if (update) {
        writeFileSync(outPath, got);
        return;
      }
      if (!existsSync(outPath)) throw new Error(`${outPath} is missing; run with UPDATE_GOLDEN=1`);
      expect(got).toBe(readFileSync(outPath, 'utf8'));
    });
    it(`${name}: passes envoy --mode validate`, () => {
      const r = validateEnvoyConfig(outPath);
      expect(r.output).toContain('OK');
      expect(r.ok).toBe(true);
    });
  }
});
