// `--upstream-idle-timeout`: how long Envoy keeps a pooled backend connection that carries no
// request, in every configuration steadfast generates clusters for (gateway mode, `dev`,
// `serve --xds` and `--envoy-files`) and in what attach mode prints for the operator's own.
import { UPSTREAM_IDLE_TIMEOUT } from '../envoy/gateway-config.js';
import { type FlagSpec, type ParsedArgs, flag } from './args.js';
import { UsageError } from './command.js';
import { durationMs } from './duration-flag.js';

export const UPSTREAM_IDLE_TIMEOUT_FLAG: FlagSpec = {
  type: 'string',
  value: 'DURATION|off',
  description:
    "how long Envoy keeps a backend connection that carries no request before it closes it: under your backends' own keep-alive, so that Envoy closes first (docs/hardening.md); off: never (Envoy warns that a lost FIN then leaks the connection)",
  default: UPSTREAM_IDLE_TIMEOUT,
};

/** Past a day a pooled connection is as good as never closed: Envoy's own default is an hour. */
const MAX_MS = 86_400_000;

/** Envoy's spelling of the flag's value (`off`: 0s, which Envoy reads as no timeout); undefined when not given. */
export function upstreamIdleTimeoutOf(parsed: ParsedArgs): string | undefined {
  const raw = flag(parsed, 'upstream-idle-timeout');
  if (raw === undefined) return undefined;
  if (raw.trim() === 'off') return '0s';
  const ms = Math.round(
    durationMs(
      parsed,
      'upstream-idle-timeout',
      0,
      'off keeps idle connections open until the backend closes them',
    ),
  );
  if (ms < 1) throw new UsageError('--upstream-idle-timeout: at least 1ms');
  if (ms > MAX_MS) throw new UsageError(`--upstream-idle-timeout: at most 86400s (a day), not ${raw}`);
  return `${ms / 1000}s`;
}
