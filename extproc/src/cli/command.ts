// A CLI subcommand: parses its own arguments, returns the process exit code.
// Exit codes: 0 success, 1 the command ran and found problems, 2 usage or I/O error.
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
