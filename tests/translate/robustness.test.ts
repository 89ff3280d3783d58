// Whatever the files hold, compiling a snapshot never throws: every golden input, mangled
// at random, still yields diagnostics, status and a table.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const inputs = readdirSync(dir).filter((f) => f.endsWith('.in.yaml'));

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const JUNK = [
  '',
  ' ',
  '-',
  ':',
  '{',
  '}',
  '[',
  ']',
  '"',
  "'",
  '\n',
  '\t',
  '0',
  '-1',
  '~',
  '*',
  '&a',
  '*a',
  'null',
  '1e999',
];

describe('compileSnapshot on mangled input', () => {
  it('never throws', () => {
    const rand = rng(7);
    let runs = 0;
    for (const input of inputs) {
      const text = readFileSync(join(dir, input), 'utf8');
      for (let k = 0; k < 25; k++) {
        const chars = [...text];
        for (let m = 0; m < 1 + Math.floor(rand() * 4); m++) {
          const at = Math.floor(rand() * chars.length);
          chars.splice(at, Math.floor(rand() * 6), JUNK[Math.floor(rand() * JUNK.length)] ?? '');
        }
        const mangled = chars.join('');
        expect(() => compileSnapshot([{ path: input, text: mangled }]), mangled).not.toThrow();
        runs++;
      }
    }
    expect(runs).toBe(inputs.length * 25);
  });
});
