// A mistake in how a command was called: printed with the usage line, exit code 2.
export class UsageError extends Error {
  override name = 'UsageError';
}
