// `steadfast <command> [args]`: dispatches to a subcommand and maps errors to exit codes.
import { PortUnavailableError } from '../runtime/port-check.js';
import { type CommandIO, EXIT_PORT, UsageError } from './command.js';
import { commands } from './commands/index.js';

const stdio: CommandIO = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

function help(): string {
  const lines = ['usage: steadfast <command> [options]', '', 'commands:'];
  for (const c of commands) lines.push(`  ${c.name.padEnd(14)} ${c.summary}`);
  lines.push('', 'Run `steadfast <command> --help` for its options.');
  return lines.join('\n');
}

export async function run(argv: readonly string[], io: CommandIO = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`steadfast: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`usage: ${command.usage}`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`steadfast ${name}: ${e.message}\nusage: ${command.usage}`);
      return 2;
    }
    if (e instanceof PortUnavailableError) {
      io.err(`steadfast ${name}: cannot listen: ${e.message}`);
      return EXIT_PORT;
    }
    io.err(`steadfast ${name}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
}
