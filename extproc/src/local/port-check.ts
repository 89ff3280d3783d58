// Checks, before anything starts, that every address:port a command will listen on can be
// bound — so a second gateway on the same port stops with one line instead of sharing it.
import { createServer } from 'node:net';

/** One address:port a command is about to listen on. */
export interface PortNeed {
  readonly address: string;
  /** 0 means "any free port": nothing to check. */
  readonly port: number;
  /** What listens there, e.g. `Gateway listener default/gw/http`. */
  readonly what: string;
  /** How the user moves it, e.g. `--admin-port N`. */
  readonly remedy: string;
}

/** A port the command cannot listen on; the CLI exits with code 3 (EXIT_PORT). */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError';
  constructor(
    readonly need: PortNeed,
    readonly reason: string,
  ) {
    super(`${hostPort(need.address, need.port)} ${reason} (${need.what}): ${need.remedy}`);
  }
}

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Binds and closes a socket without SO_REUSEPORT: fails wherever a listener holds the port. */
function probe(need: PortNeed): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) => {
      resolve(
        e.code === 'EADDRINUSE'
          ? 'is in use by another process'
          : e.code === 'EACCES'
            ? 'needs privileges this process does not have'
            : e.code === 'EADDRNOTAVAIL'
              ? 'is not an address of this machine'
              : `cannot be bound: ${e.message}`,
      );
    });
    server.listen({ host: need.address, port: need.port, exclusive: true }, () =>
      server.close(() => resolve(undefined)),
    );
  });
}

/** Throws PortUnavailableError for the first need that cannot be bound now. */
export async function checkPortsFree(needs: readonly PortNeed[]): Promise<void> {
  const seen = new Map<string, PortNeed>();
  for (const need of needs) {
    if (need.port === 0) continue;
    const key = hostPort(need.address, need.port);
    const twice = seen.get(key);
    if (twice) {
      throw new PortUnavailableError(need, `is also wanted by ${twice.what}`);
    }
    seen.set(key, need);
    const reason = await probe(need);
    if (reason !== undefined) throw new PortUnavailableError(need, reason);
  }
}

/** `HOST:PORT` (or `[v6]:PORT`) split into its parts; undefined when it is not that shape. */
export function splitHostPort(text: string): { address: string; port: number } | undefined {
  const m = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(text);
  if (!m?.[1] || !m[2]) return undefined;
  return { address: m[1], port: Number(m[2]) };
}
