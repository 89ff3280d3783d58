// When a route configuration switches the idempotent methods' `reset` filter on for all
// (envoy/reset-default.ts): with no generation before, when most of its routes want it; after
// one, only when the other way leads by more than a tenth of the routes. Checked over seeded
// random walks of one-route changes: every switch is the cheaper way or within the margin of
// it, and a table never changes its switch twice within fewer changes than the margin.
import { describe, expect, it } from 'vitest';
import { resetOnForAll } from '../../extproc/src/envoy/reset-default.js';
import { mulberry32 } from '../support/mulberry32.js';

describe('the reset switch of a route configuration', () => {
  it('without a generation before: on when most routes want it (a tie keeps it off)', () => {
    expect(resetOnForAll(1, 1, undefined)).toBe(true);
    expect(resetOnForAll(0, 2, undefined)).toBe(false);
    expect(resetOnForAll(-3, 9, undefined)).toBe(false);
  });

  it('after one: changes only when the other way leads by more than a tenth of the routes', () => {
    // 100 routes: a margin of 10.
    expect(resetOnForAll(10, 100, false)).toBe(false);
    expect(resetOnForAll(12, 100, false)).toBe(true);
    expect(resetOnForAll(-10, 100, true)).toBe(true);
    expect(resetOnForAll(-12, 100, true)).toBe(false);
    // Under 10 routes, most decide; a tie keeps what was.
    expect(resetOnForAll(0, 4, true)).toBe(true);
    expect(resetOnForAll(0, 4, false)).toBe(false);
    expect(resetOnForAll(-2, 4, true)).toBe(false);
  });

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`a random walk of one-route changes (seed ${seed}): cheap, and no flapping`, () => {
      const next = mulberry32(seed);
      const routes = 50 + Math.floor(next() * 2000);
      let wanting = Math.floor(next() * (routes + 1));
      let on: boolean | undefined;
      let lastFlip = -Infinity;
      for (let change = 0; change < 5000; change++) {
        // One route's rule gains or loses its retries (the count of routes stays).
        if (next() < 0.5 + (wanting < routes / 2 ? 0.02 : -0.02)) wanting = Math.min(routes, wanting + 1);
        else wanting = Math.max(0, wanting - 1);
        const balance = 2 * wanting - routes;
        const margin = Math.floor(routes / 10);
        const now = resetOnForAll(balance, routes, on);
        // The routes that say their own switch are at most the margin more than the cheaper way's.
        const saying = now ? routes - wanting : wanting;
        expect(saying).toBeLessThanOrEqual(Math.min(wanting, routes - wanting) + margin);
        if (on !== undefined && now !== on) {
          // Each change moves the balance by 2: the other side must gain more than 2 margins.
          expect(change - lastFlip).toBeGreaterThan(margin);
          lastFlip = change;
        }
        on = now;
      }
    });
  }
});
