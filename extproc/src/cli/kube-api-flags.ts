// The client-side rate limit of `serve` and `dev` on a cluster: how many writes a second steadfast
// sends the API server (status writes); reads (lists, watches, Secret reads) go at once but take
// their token, so the writes after them wait the longer; the Lease is aside.
import type { RateLimit } from '../provider/kubernetes/rate-limit.js';
import { type FlagSpecs, type ParsedArgs, flag } from './args.js';
import { UsageError } from './command.js';

export const KUBE_API_FLAGS: FlagSpecs = {
  'kube-api-qps': {
    type: 'string',
    value: 'N',
    description:
      'with a cluster: writes a second to the API server, on average; reads (lists, watches) go at once and take from the same budget, so the writes after them wait the longer (the Lease is not counted); -1 for no limit. 10,000 route statuses in 10 s need 1000 or more (docs/kubernetes.md)',
    default: '20',
  },
  'kube-api-burst': {
    type: 'string',
    value: 'N',
    description:
      'with a cluster: writes that may go at once, above --kube-api-qps, after a quiet spell (the budget reads take from too)',
    default: '30',
  },
};

/** The limit the flags set: client-go's token bucket (kube-controller-manager's 20/s, burst 30, by default). */
export function rateLimitOf(parsed: ParsedArgs): RateLimit {
  const rawQps = flag(parsed, 'kube-api-qps') ?? '20';
  const rawBurst = flag(parsed, 'kube-api-burst') ?? '30';
  const qps = Number(rawQps);
  if (rawQps.trim() === '' || !Number.isFinite(qps) || qps === 0 || (qps < 0 && qps !== -1))
    throw new UsageError(
      `--kube-api-qps: "${rawQps}" is not a number of requests a second (more than 0, or -1 for no limit)`,
    );
  const burst = Number(rawBurst);
  if (!/^\d+$/.test(rawBurst.trim()) || burst < 1)
    throw new UsageError(`--kube-api-burst: "${rawBurst}" is not a whole number of requests, 1 or more`);
  return { qps, burst };
}
