// The client-side limit on requests to the API server, as client-go's token bucket: `qps`
// tokens come a second, at most `burst` are kept, and each request takes one, waiting its turn
// when none is left. Turns are handed out in the order they are asked for. A read may take its
// token without waiting (spend): the requests after it wait the longer instead.
import { performance } from 'node:perf_hooks';

export interface RateLimit {
  /** Requests a second on average; 0 or less (client-go's -1) turns the limit off. */
  readonly qps: number;
  /** Requests that may go at once after a quiet spell (the bucket's size). */
  readonly burst: number;
}

/** kube-controller-manager's, and controller-runtime's until v0.21 (which now turns the limit off). */
export const DEFAULT_RATE_LIMIT: RateLimit = { qps: 20, burst: 30 };

export class TokenBucket {
  /** Tokens held at `at`; negative when turns are promised ahead of the tokens that pay for them. */
  private tokens: number;
  private at: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limit.burst;
    this.at = now();
  }

  /** Milliseconds until this request's turn (0: now); the token is taken either way. */
  reserve(): number {
    if (this.limit.qps <= 0) return 0;
    const now = this.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.at) / 1000) * this.limit.qps);
    this.at = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.limit.qps) * 1000;
  }

  /** Takes a token and goes at once, ahead of those waiting: they wait for it too. */
  spend(): void {
    this.reserve();
  }

  /** Resolves at this request's turn. */
  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}
