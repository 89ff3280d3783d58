// envoy/bench/ holds the benchmark's Envoy-only setups (plain Envoy, and Envoy's own retry and
// stateful_session for the rules steadfast is compared on). They are static files that nothing
// generates, so this test keeps them loadable by the pinned Envoy.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEnvoyConfig } from '../../extproc/src/local/envoy-binary.js';
import { REPO_ROOT } from '../support/paths.js';

const DIR = join(REPO_ROOT, 'envoy', 'bench');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));

describe('envoy/bench', () => {
  it('holds the three setups the benchmark reads (V1, V4, V4r)', () => {
    expect(FILES.sort()).toEqual(['native-retry.yaml', 'native.yaml', 'plain.yaml']);
  });

  it.each(FILES)('%s passes envoy --mode validate', (file) => {
    const v = validateEnvoyConfig(join(DIR, file));
    expect(v.output).toContain('OK');
    expect(v.ok).toBe(true);
  });
});
