// The backends command line, kept apart from process wiring so tests can run it in-process.
import { parseArgs } from 'node:util';
import { AttemptLedger } from './attempt-ledger.js';
import { startEchoBackend } from './echo/start-echo-backend.js';
import { startGrpcBackend } from './grpc/start-grpc-backend.js';
import { listenPort } from './loopback-endpoint.js';
import type { RunningBackend } from './running-backend.js';

export const usage =
  'usage: main.js <echo|grpc> --address 127.0.0.x [--address ...] [--port N] [--name NAME ...]';

const starters = {
  echo: startEchoBackend,
  grpc: startGrpcBackend,
} as const;

export interface CliIo {
  /** One line of machine-readable output. */
  readonly out: (line: string) => void;
  /** One line for people: usage and errors. */
  readonly err: (line: string) => void;
  /** Settles when the backends should stop (a signal, or a test saying so). */
  readonly stopped: Promise<void>;
  /** Called with the started backends, before waiting for `stopped`. */
  readonly started?: (backends: readonly RunningBackend[]) => void;
}

function isKind(value: string | undefined): value is keyof typeof starters {
  return value === 'echo' || value === 'grpc';
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      address: { type: 'string', multiple: true },
      port: { type: 'string' },
      name: { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
}

/** Runs the command; resolves with the exit code once the backends stopped (or failed to start). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err(error instanceof Error ? error.message : String(error));
    io.err(usage);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out(usage);
    return 0;
  }
  const kind = positionals[0];
  const addresses = values.address ?? [];
  const names = values.name ?? [];
  if (!isKind(kind) || positionals.length !== 1 || addresses.length === 0) {
    io.err(usage);
    return 2;
  }
  if (names.length > 0 && names.length !== addresses.length) {
    io.err(`give one --name per --address (${addresses.length} addresses, ${names.length} names)`);
    return 2;
  }

  // One ledger for every instance of this process: a retry that moves host still counts as the next attempt.
  const ledger = new AttemptLedger();
  const running: RunningBackend[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(running.map((backend) => backend.close()));
  };
  try {
    const port = listenPort(values.port ?? '0');
    for (const [i, address] of addresses.entries()) {
      const backend = await starters[kind]({ address, port, name: names[i], ledger });
      running.push(backend);
      io.out(
        JSON.stringify({ backend: kind, name: backend.name, address: backend.address, port: backend.port }),
      );
    }
  } catch (error) {
    io.err(`cannot start ${kind} backend: ${error instanceof Error ? error.message : String(error)}`);
    await stop();
    return 1;
  }
  io.started?.(running);
  await io.stopped;
  await stop();
  return 0;
}
