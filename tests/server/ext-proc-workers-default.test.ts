// `steadfast serve --workers` when not given: one process on small machines, then one per
// two CPUs, bounded.
import { describe, expect, it } from 'vitest';
import { defaultExtProcWorkers } from '../../extproc/src/server/ext-proc-workers.js';

describe('defaultExtProcWorkers', () => {
  it('is 1 up to 2 CPUs, one per two CPUs above, at most 8', () => {
    expect([1, 2, 3, 4, 5, 8, 16, 17, 64].map(defaultExtProcWorkers)).toEqual([1, 1, 1, 2, 2, 4, 8, 8, 8]);
  });
});
