// A CLI subcommand: declares its flags (parsed and documented from the same table) and
// returns the process exit code.
import type { FlagSpecs, ParsedArgs } from './args.js';

/** A command as `steadfast --help` lists it, its module loaded only when it is asked for. */
export interface CommandEntry {
  readonly name: string;
  /** One line for `steadfast --help`. */
  readonly summary: string;
  load(): Promise<Command>;
}

export interface Command {
  /** `steadfast dev --config DIR [options]` */
  readonly usage: string;
  /** A few sentences for the command's --help, after the usage line. */
  readonly description: string;
  readonly flags: FlagSpecs;
  /** Positional arguments the command takes, for --help; none when absent. */
  readonly positionals?: string;
  run(args: ParsedArgs, io: CommandIO): Promise<number>;
}

export interface CommandIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export { UsageError } from './usage-error.js';

// Exit codes, the same for every command: 0 success, 1 problems found (validate, resolve
// without a match), and these two.
/** Usage or I/O error: a bad flag, an unreadable file. */
export const EXIT_USAGE = 2;
/** A port the command needs cannot be bound (in use, privileged, not a local address). */
export const EXIT_PORT = 3;

export const EXIT_CODES_HELP = [
  'exit codes: 0 success; 1 problems found (validate, resolve without a match); 2 usage or I/O error;',
  '            3 a port cannot be bound (in use, privileged, not an address of this machine)',
];
