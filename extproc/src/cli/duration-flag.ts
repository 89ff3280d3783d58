// A duration flag, read one way by every command: `15s`, `500ms`, or a number of seconds.
import { type ParsedArgs, flag } from './args.js';
import { UsageError } from './command.js';

/** The flag's value in ms (`fallbackMs` when not given); zero or less is refused, with `zeroHint` when given. */
export function durationMs(parsed: ParsedArgs, name: string, fallbackMs: number, zeroHint?: string): number {
  const raw = flag(parsed, name);
  if (raw === undefined) return fallbackMs;
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`--${name}: "${raw}" is not a duration such as 15s or 500ms`);
  const ms = m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * 1000;
  if (ms <= 0) throw new UsageError(`--${name}: must be more than 0${zeroHint ? ` (${zeroHint})` : ''}`);
  return ms;
}
