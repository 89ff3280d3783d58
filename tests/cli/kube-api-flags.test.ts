// The rate-limit flags: kube-controller-manager's 20 requests a second with a burst of 30 unless
// told otherwise, -1 for no limit, and a clear refusal of anything else.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../extproc/src/cli/args.js';
import { KUBE_API_FLAGS, rateLimitOf } from '../../extproc/src/cli/kube-api-flags.js';

const limit = (...args: string[]) => rateLimitOf(parseArgs(args, KUBE_API_FLAGS));

describe('kube-api flags', () => {
  it('default to 20 requests a second, burst 30', () => {
    expect(limit()).toEqual({ qps: 20, burst: 30 });
  });

  it('take a rate (decimals too), a burst, and -1 for no limit', () => {
    expect(limit('--kube-api-qps', '2000', '--kube-api-burst', '3000')).toEqual({ qps: 2000, burst: 3000 });
    expect(limit('--kube-api-qps', '0.5')).toEqual({ qps: 0.5, burst: 30 });
    expect(limit('--kube-api-qps', '-1')).toEqual({ qps: -1, burst: 30 });
  });

  it('refuse a rate of 0, another negative one or words, and a burst that is not a whole number of 1 or more', () => {
    for (const bad of ['0', '-2', 'fast', ''])
      expect(() => limit('--kube-api-qps', bad)).toThrow(/--kube-api-qps: .* -1 for no limit/);
    for (const bad of ['0', '2.5', '-1', 'lots'])
      expect(() => limit('--kube-api-burst', bad)).toThrow(/--kube-api-burst: .* 1 or more/);
  });
});
