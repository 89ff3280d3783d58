// The piece writer against what it must send: after every step of seeded random changes to a
// list (items added, removed, replaced by equal or different ones, moved; the list reversed;
// items of the same JSON made and undone, removed ones back as copies; the reader sometimes not taking a list), each item
// crosses as the first position of its JSON in the list the reader holds when the writer wrote
// that one last, else as its JSON; the digests are each item's, and the reader makes the list.
import { describe, expect, it } from 'vitest';
import { PieceReader, PieceWriter } from '../../extproc/src/pipeline/piece-list.js';
import { jsonDigest } from '../../extproc/src/policy/table-digest.js';
import { mulberry32 as random } from '../support/mulberry32.js';

interface Item {
  readonly name: string;
  readonly value: number;
}

function change(list: Item[], rand: () => number, make: () => Item, gone: Item[]): Item[] {
  const at = Math.floor(rand() * (list.length + 1));
  const pick = rand();
  const next = [...list];
  // One of the last few removed: a copy put back soon after.
  const back = gone[gone.length - 1 - Math.floor(rand() * Math.min(3, gone.length))];
  if (pick < 0.15 && back) next.splice(at, 0, { ...back });
  else if (pick < 0.3) next.splice(at, 0, ...Array.from({ length: 1 + Math.floor(rand() * 3) }, make));
  else if (pick < 0.5) next.splice(at, 1 + Math.floor(rand() * 3));
  else if (pick < 0.65 && at < next.length) next[at] = make();
  else if (pick < 0.75 && at < next.length) next[at] = { ...(next[at] as Item) };
  else if (pick < 0.85 && next.length > 1) {
    const [moved] = next.splice(at, 1);
    if (moved) next.splice(Math.floor(rand() * (next.length + 1)), 0, moved);
  } else if (pick < 0.9) return next.reverse();
  return next;
}

describe('PieceWriter', () => {
  it('sends what the reader does not hold, and positions for what it does, after seeded random changes', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = random(seed);
      // Few values make items of the same JSON come and go; many keep them rare.
      const values = [8, 60, 100_000][seed % 3] as number;
      const make = (): Item => ({ name: `n${Math.floor(rand() * values)}`, value: 1 });
      const writer = new PieceWriter<Item>();
      const reader = new PieceReader<Item>('test list');
      let written: { id: number; items: Item[] } | undefined;
      let list = Array.from({ length: 30 }, make);
      const gone: Item[] = [];
      for (let id = 1; id <= 80; id++) {
        const held = reader.held;
        const { list: sent, digests } = writer.write(list, id, held);
        const base =
          held !== undefined && written?.id === held ? written.items.map((x) => JSON.stringify(x)) : [];
        const where = `seed ${seed} list ${id}`;
        expect(sent.items, where).toEqual(
          list.map((item) => {
            const json = JSON.stringify(item);
            const position = base.indexOf(json);
            return position >= 0 ? position : json;
          }),
        );
        expect(digests, where).toEqual(list.map((item) => jsonDigest(JSON.stringify(item))));
        written = { id, items: list };
        // Now and then the reader does not take a list: the next is written against an older one.
        if (rand() < 0.9)
          expect(
            reader.read(sent, id, (t) => JSON.parse(t) as Item),
            where,
          ).toEqual(list);
        // Items removed may come back as equal copies.
        const next = change(list, rand, make, gone);
        gone.push(...list.filter((x) => !next.includes(x)));
        list = next;
      }
    }
  });
});
