// Waiting for the event a test asserts on, instead of sleeping and hoping it happened:
// polls a condition and fails loudly, naming what never came, when it does not hold in time.

/** Polls `check` every `stepMs` until it holds; throws `<what> not within <limitMs> ms` otherwise. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs = 5000,
  stepMs = 10,
): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what} not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
