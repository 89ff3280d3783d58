// A small, strict argument parser: `--flag value`, `--flag=value`, repeated flags, positionals.
import { UsageError } from './command.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
}

export interface ParsedArgs {
  readonly flags: Map<string, string[]>;
  readonly positionals: string[];
}

export function parseArgs(args: readonly string[], spec: Readonly<Record<string, FlagSpec>>): ParsedArgs {
  const flags = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const def = spec[name];
    if (!def) throw new UsageError(`unknown flag --${name}`);
    let value: string;
    if (def.type === 'boolean') {
      value = eq === -1 ? 'true' : arg.slice(eq + 1);
    } else if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      const next = args[i + 1];
      if (next === undefined) throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    const seen = flags.get(name) ?? [];
    if (seen.length > 0 && !def.multiple) throw new UsageError(`--${name} given more than once`);
    seen.push(value);
    flags.set(name, seen);
  }
  return { flags, positionals };
}

export function flag(parsed: ParsedArgs, name: string): string | undefined {
  return parsed.flags.get(name)?.[0];
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
