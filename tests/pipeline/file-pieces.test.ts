// Cutting a changed file from its last cut (file-pieces.ts recut) against cutting it afresh:
// after seeded random edits of texts made of what decides where pieces start (document
// starts, look-alikes, line breaks of every kind, directives, end markers), the kept, moved
// and newly cut pieces are exactly the fresh cut, and a text that must be read whole is
// found to be so.
import { describe, expect, it } from 'vitest';
import { type PieceSpan, documentSpans, recut } from '../../extproc/src/pipeline/file-pieces.js';
import { rng as random } from '../resolve/random-table.js';

const FRAGMENTS = [
  '---\n',
  '--- # c\n',
  '---x\n',
  ' ---\n',
  '---',
  '-',
  '\n',
  '\r\n',
  '\r',
  '\u2028',
  '...\n',
  '...x',
  '%YAML 1.2\n',
  'a: 1\n',
  'b: "---"\n',
  'kind: HTTPRoute\n',
  'x'.repeat(5000),
];

function text(rnd: () => number, parts: number): string {
  let out = '';
  for (let i = 0; i < parts; i++) {
    // Mostly plain documents, so that most texts can be cut.
    const r = rnd();
    out +=
      r < 0.5
        ? 'a: 1\n---\n'
        : r < 0.7
          ? 'b: 2\n'
          : (FRAGMENTS[Math.floor(rnd() * FRAGMENTS.length)] as string);
  }
  return out;
}

function edited(rnd: () => number, t: string): string {
  const at = Math.floor(rnd() * (t.length + 1));
  const cut = Math.floor(rnd() * Math.min(20, t.length - at + 1));
  return t.slice(0, at) + text(rnd, Math.floor(rnd() * 3)) + t.slice(at + cut);
}

/** The new cut as recut describes it: kept pieces, the ones cut again, the moved ones. */
function assembled(last: readonly PieceSpan[], next: string, previous: string): PieceSpan[] | undefined {
  const plan = recut(previous, last, next);
  if (!plan) return undefined;
  return [
    ...last.slice(0, plan.head),
    ...plan.middle,
    ...last.slice(plan.tail).map((s) => ({
      start: s.start + plan.shift,
      end: s.end + plan.shift,
      linesBefore: s.linesBefore + plan.lines,
    })),
  ];
}

describe('recut', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`cuts an edited text as a fresh cut does (seed ${seed})`, () => {
      const rnd = random(seed);
      let checked = 0;
      for (let round = 0; round < 300; round++) {
        let t = text(rnd, 5 + Math.floor(rnd() * 40));
        for (let step = 0; step < 10; step++) {
          const last = documentSpans(t);
          const next = edited(rnd, t);
          if (last) {
            expect(assembled(last, next, t), JSON.stringify({ t, next })).toEqual(documentSpans(next));
            checked++;
          }
          t = next;
        }
      }
      expect(checked).toBeGreaterThan(500);
    });
  }

  it('keeps every piece but the edited one, and moves those after it', () => {
    const doc = (i: number, path = `/r/${i}`) => `kind: HTTPRoute\nname: r-${i}\npath: ${path}\n`;
    const docs = Array.from({ length: 100 }, (_, i) => doc(i));
    const t = docs.join('---\n');
    const spans = documentSpans(t) as PieceSpan[];
    expect(spans).toHaveLength(100);
    const longer = [...docs];
    longer[40] = `${doc(40, '/edited/40')}extra: line\n`;
    const plan = recut(t, spans, longer.join('---\n'));
    expect(plan).toMatchObject({
      head: 40,
      tail: 41,
      lines: 1,
      shift: '/edited/40'.length - '/r/40'.length + 12,
    });
    expect(plan?.middle).toHaveLength(1);
  });
});
