// The policy module (extproc/src/policy/policy.ts, policy-token.ts) and the filter's decoder
// (filter/assembly/policy/token.ts, AssemblyScript) spell the same contract twice: this reads
// the filter's source and holds its constants to the TypeScript ones, so neither can move alone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRPC_RETRY_REASONS } from '../../extproc/src/policy/policy.js';
import {
  METADATA_NAMESPACE,
  METADATA_POLICY_KEY,
  POLICY_TOKEN_KEYS,
  POLICY_TOKEN_MAX_BYTES,
  POLICY_TOKEN_MAX_NUMBER,
  POLICY_TOKEN_VERSION,
} from '../../extproc/src/policy/policy-token.js';
import { REPO_ROOT } from '../support/paths.js';

const filterSource = (path: string) => readFileSync(join(REPO_ROOT, 'filter/assembly', path), 'utf8');
const TOKEN = filterSource('policy/token.ts');

/** The body of a top-level function of the filter's token decoder. */
function functionBody(name: string): string {
  const start = TOKEN.indexOf(`function ${name}(`);
  expect(start, `function ${name} in filter/assembly/policy/token.ts`).toBeGreaterThanOrEqual(0);
  return TOKEN.slice(start, TOKEN.indexOf('\n}\n', start));
}

const quoted = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]);

describe('the filter decodes the token the policy module encodes', () => {
  it('with the same version and size limit', () => {
    expect(TOKEN).toMatch(new RegExp(`const VERSION = '${POLICY_TOKEN_VERSION}';`));
    expect(TOKEN).toMatch(new RegExp(`export const POLICY_TOKEN_MAX_BYTES = ${POLICY_TOKEN_MAX_BYTES};`));
  });

  it('with numbers up to the same largest value (an i32 of at most ten digits)', () => {
    expect(POLICY_TOKEN_MAX_NUMBER).toBe(2 ** 31 - 1);
    const parse = functionBody('parseNumber');
    expect(parse).toContain('i32.MAX_VALUE');
    expect(parse).toContain('n > 10');
  });

  it('with the same gRPC retry reasons', () => {
    expect(quoted(functionBody('isGrpcReason'), /s == '([^']+)'/g)).toEqual([...GRPC_RETRY_REASONS]);
  });

  it('with the same keys', () => {
    const keys = quoted(TOKEN, /key == '([^']+)'/g);
    expect(new Set(keys)).toEqual(new Set(POLICY_TOKEN_KEYS));
    expect(keys).toHaveLength(POLICY_TOKEN_KEYS.length);
  });

  it('from the same metadata namespace and key', () => {
    expect(filterSource('properties.ts')).toContain(
      `'filter_metadata', '${METADATA_NAMESPACE}', '${METADATA_POLICY_KEY}'`,
    );
  });
});
