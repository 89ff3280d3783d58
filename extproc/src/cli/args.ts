// A small, strict argument parser: `--flag value`, `--flag=value`, repeated flags,
// positionals. Each flag is declared once with what it means and its default, so `--help`
// is written from the same table the parser reads; old spellings are aliases that still
// work and say what to use instead.
import { UsageError } from './usage-error.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** What the value looks like in --help, e.g. `DIR`, `HOST:PORT`. */
  readonly value?: string;
  /** One line for --help. */
  readonly description: string;
  /** The default as --help shows it; omitted when there is none. */
  readonly default?: string;
  /** Older spellings, still accepted with a deprecation line. */
  readonly aliases?: readonly string[];
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export interface ParsedArgs {
  readonly flags: Map<string, string[]>;
  readonly positionals: string[];
  /** One line per deprecated spelling used: `--session-keys is deprecated; use --session-key-file`. */
  readonly deprecations: string[];
}

export function parseArgs(args: readonly string[], spec: FlagSpecs): ParsedArgs {
  const flags = new Map<string, string[]>();
  const positionals: string[] = [];
  const deprecations: string[] = [];
  const byAlias = new Map<string, string>();
  for (const [name, def] of Object.entries(spec)) for (const a of def.aliases ?? []) byAlias.set(a, name);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const given = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const alias = byAlias.get(given);
    const name = alias ?? given;
    const def = spec[name];
    if (!def) throw new UsageError(`unknown flag --${given}`);
    if (alias !== undefined) {
      const line = `--${given} is deprecated; use --${name}`;
      if (!deprecations.includes(line)) deprecations.push(line);
    }
    let value: string;
    if (def.type === 'boolean') {
      value = eq === -1 ? 'true' : arg.slice(eq + 1);
      if (value !== 'true' && value !== 'false')
        throw new UsageError(`--${given} is true or false, not ${value}`);
    } else if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      const next = args[i + 1];
      if (next === undefined) throw new UsageError(`--${given} needs a value`);
      value = next;
      i++;
    }
    const seen = flags.get(name) ?? [];
    if (seen.length > 0 && !def.multiple) throw new UsageError(`--${name} given more than once`);
    seen.push(value);
    flags.set(name, seen);
  }
  return { flags, positionals, deprecations };
}

export function flag(parsed: ParsedArgs, name: string): string | undefined {
  return parsed.flags.get(name)?.[0];
}

export function boolFlag(parsed: ParsedArgs, name: string, fallback = false): boolean {
  const raw = flag(parsed, name);
  return raw === undefined ? fallback : raw === 'true';
}

export function intFlag(parsed: ParsedArgs, name: string, fallback: number, min = 0, max = 65535): number {
  const raw = flag(parsed, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name}: ${raw} is not an integer in ${min}-${max}`);
  }
  return n;
}

/** The option table of --help: `  --name VALUE   description (default: x)`, aliases noted. */
export function flagsHelp(spec: FlagSpecs): string[] {
  const rows = Object.entries(spec).map(([name, def]) => {
    const head = `--${name}${def.value ? ` ${def.value}` : ''}`;
    let text = def.description;
    if (def.multiple) text += '; repeatable';
    if (def.default !== undefined) text += ` (default: ${def.default})`;
    else if (def.type === 'boolean') text += ' (default: off)';
    else if (!def.description.includes('(required)')) text += ' (default: none)';
    if (def.aliases?.length) text += ` [old spelling: ${def.aliases.map((a) => `--${a}`).join(', ')}]`;
    return { head, text };
  });
  const width = Math.max(...rows.map((r) => r.head.length), 0) + 2;
  return rows.map((r) => `  ${r.head.padEnd(width)}${r.text}`);
}
