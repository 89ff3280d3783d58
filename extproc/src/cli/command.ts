// A CLI subcommand: parses its own arguments, returns the process exit code.
// Exit codes: 0 success, 1 the command ran and found problems, 2 usage or I/O error,
// 3 a port the command needs cannot be bound (in use, privileged, not a local address).
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: readonly string[], io: CommandIO): Promise<number>;
}

export interface CommandIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const EXIT_OK = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_USAGE = 2;
export const EXIT_PORT = 3;
