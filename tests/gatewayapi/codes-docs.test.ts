// The diagnostic catalogue and docs/gateway-api.md stay in sync.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '../../extproc/src/gatewayapi/codes.js';

describe('diagnostic codes', () => {
  it('are all documented in docs/gateway-api.md', () => {
    const doc = readFileSync('docs/gateway-api.md', 'utf8');
    const missing = Object.keys(DIAGNOSTIC_CODES).filter((c) => !doc.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });
});
