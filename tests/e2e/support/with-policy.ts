// Exchanges that got their rule's policy, in both modes. In attach mode a request whose policy
// does not come within ext_proc's message_timeout (0.2 s, as shipped) goes on without it, by
// design (docs/attach.md, "Failure behaviour"); on a loaded machine a few in a thousand do.
// Such an exchange is not a table row's scenario, so it is sent again, but only when Envoy
// counted exactly as many ext_proc time-outs as exchanges came back without a policy. An exchange
// whose right answer may be no policy is judged by those counters alone (answeredInTime).
import { expect } from 'vitest';
import type { EnvoyProcess } from '../../../extproc/src/local/envoy-process.js';
import { isGatewayMode, type ModeName } from './mode-stack.js';

/** The response header the filter's debug mode writes: the policy token the request got. */
export const POLICY_HEADER = 'x-steadfast-policy';

/** What `withPolicy` reads: the mode (attach modes only are checked) and its Envoy's counters. */
export interface PolicyStack {
  readonly mode: ModeName;
  readonly envoy: EnvoyProcess;
}

/** How many times exchanges are sent again after ext_proc missed its message_timeout. */
const MAX_RESENDS = 3;

/** Envoy's counts of ext_proc exchanges that missed message_timeout and went on without policy. */
async function extProcGaveUp(envoy: EnvoyProcess): Promise<{ timeouts: number; failedOpen: number }> {
  const stats = await envoy.stats('ext_proc');
  return {
    timeouts: stats.get('http.ingress.ext_proc.message_timeouts') ?? 0,
    failedOpen: stats.get('http.ingress.ext_proc.failure_mode_allowed') ?? 0,
  };
}

/**
 * `count` exchanges made by `one` at once, each of which had its policy (`policy(x)`, from
 * POLICY_HEADER). Any exchange without its policy that Envoy's ext_proc counts do not account
 * for fails the test, as do more than MAX_RESENDS rounds of sending again.
 */
export async function withPolicy<T>(
  stack: PolicyStack,
  count: number,
  one: () => Promise<T>,
  policy: (x: T) => boolean,
): Promise<T[]> {
  const done: T[] = [];
  for (let resend = 0; done.length < count; resend++) {
    expect(resend, 'rounds sent again after ext_proc missed its message_timeout').toBeLessThanOrEqual(
      MAX_RESENDS,
    );
    const before = isGatewayMode(stack.mode) ? null : await extProcGaveUp(stack.envoy);
    const batch = await Promise.all(Array.from({ length: count - done.length }, one));
    const without = before === null ? 0 : batch.filter((x) => !policy(x)).length;
    if (before !== null && without > 0) {
      const after = await extProcGaveUp(stack.envoy);
      const gaveUp = {
        timeouts: after.timeouts - before.timeouts,
        failedOpen: after.failedOpen - before.failedOpen,
      };
      expect(gaveUp, `${without} of ${batch.length} exchanges came back without a policy`).toEqual({
        timeouts: without,
        failedOpen: without,
      });
      console.log(`${stack.mode} mode: ${without} exchange(s) missed ext_proc's message_timeout; sent again`);
    }
    done.push(...batch.filter((x) => before === null || policy(x)));
  }
  return done;
}

/** One exchange made by `one` that had its policy: `withPolicy` for a single exchange, in turn. */
export async function oneWithPolicy<T>(
  stack: PolicyStack,
  one: () => Promise<T>,
  policy: (x: T) => boolean,
): Promise<T> {
  const [x] = await withPolicy(stack, 1, one, policy);
  return x!;
}

/**
 * One exchange made by `one` with nothing else in flight through this Envoy, whose ext_proc
 * answer came in time: for exchanges whose right answer may be no policy at all (no rule
 * matches), where the policy header cannot tell. If Envoy counted an ext_proc time-out that
 * went on without policy while it ran, it is sent again; any other count fails the test.
 */
export async function answeredInTime<T>(stack: PolicyStack, one: () => Promise<T>): Promise<T> {
  if (isGatewayMode(stack.mode)) return one();
  for (let resend = 0; ; resend++) {
    const before = await extProcGaveUp(stack.envoy);
    const x = await one();
    const after = await extProcGaveUp(stack.envoy);
    const gaveUp = {
      timeouts: after.timeouts - before.timeouts,
      failedOpen: after.failedOpen - before.failedOpen,
    };
    if (gaveUp.timeouts === 0 && gaveUp.failedOpen === 0) return x;
    expect(gaveUp, 'ext_proc time-outs during one exchange alone').toEqual({ timeouts: 1, failedOpen: 1 });
    expect(resend, 'times sent again after ext_proc missed its message_timeout').toBeLessThan(MAX_RESENDS);
    console.log(`${stack.mode} mode: an exchange missed ext_proc's message_timeout; sent again`);
  }
}
