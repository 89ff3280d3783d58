// `steadfast <command> [args]`: dispatches to a subcommand, parses its flags from the
// command's own table (which also writes its --help), and maps errors to exit codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../local/project-root.js';
import { PortUnavailableError } from '../local/port-check.js';
import { flagsHelp, parseArgs } from './args.js';
import {
  type Command,
  type CommandIO,
  EXIT_CODES_HELP,
  EXIT_PORT,
  EXIT_USAGE,
  UsageError,
} from './command.js';
import { commands } from './commands/index.js';

const stdio: CommandIO = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

export function version(): string {
  const pkg = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function help(): string {
  const lines = ['usage: steadfast <command> [options]', '', 'commands:'];
  for (const c of commands) lines.push(`  ${c.name.padEnd(14)} ${c.summary}`);
  lines.push(
    '',
    'options:',
    '  -h, --help     this text; `steadfast <command> --help` describes a command and each of its options',
    '  -v, --version  the version of steadfast',
    '',
    ...EXIT_CODES_HELP,
  );
  return lines.join('\n');
}

function commandHelp(c: Command): string {
  return [
    `usage: ${c.usage}`,
    '',
    c.description,
    '',
    ...(c.positionals ? [`arguments: ${c.positionals}`, ''] : []),
    'options:',
    ...flagsHelp({ ...c.flags, help: { type: 'boolean', description: 'this text' } }),
    '',
    ...EXIT_CODES_HELP,
  ].join('\n');
}

export async function run(argv: readonly string[], io: CommandIO = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(help());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(`steadfast ${version()}`);
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    io.err(`steadfast: unknown command "${name}"\n\n${help()}`);
    return EXIT_USAGE;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(commandHelp(command));
    return 0;
  }
  try {
    const parsed = parseArgs(rest, command.flags);
    if (!command.positionals && parsed.positionals.length > 0) {
      throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    }
    for (const d of parsed.deprecations) io.err(`steadfast ${name}: warning: ${d}`);
    return await command.run(parsed, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`steadfast ${name}: ${e.message}\nusage: ${command.usage} (--help describes every option)`);
      return EXIT_USAGE;
    }
    if (e instanceof PortUnavailableError) {
      io.err(`steadfast ${name}: cannot listen: ${e.message}`);
      return EXIT_PORT;
    }
    io.err(`steadfast ${name}: ${e instanceof Error ? e.message : String(e)}`);
    return EXIT_USAGE;
  }
}
