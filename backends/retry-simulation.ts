// The flaky-backend rule shared by the HTTP and gRPC backends, with the meaning the Gateway API
// conformance tests give it: `succeedAfter=N` makes the first N attempts for a uuid fail and every later
// attempt succeed ("succeeds after 2 retries": succeedAfter 2 with attempts 3 → the third try answers 200).

/** True when the attempt (1-based) is one of the first `succeedAfter` attempts, which must fail. */
export function failsAttempt(attempt: number, succeedAfter: number): boolean {
  return attempt <= succeedAfter;
}

/** Largest succeedAfter accepted: far above any retry budget, small enough to stay a sane number. */
export const maxSucceedAfter = 1000;
