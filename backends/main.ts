#!/usr/bin/env node
// The test backends as a command:
//   node dist/backends/main.js echo --address 127.0.0.2 --port 8080 --name b1
//   node dist/backends/main.js grpc --address 127.0.0.2 --port 9090 --name g1
// Repeat --address (and --name, in the same order) to run several instances in one process; they share
// one attempt ledger. Each started instance prints one JSON line {"backend","name","address","port"}.
// SIGINT or SIGTERM stops them.
import { runCli } from './cli.js';

const stopped = new Promise<void>((resolve) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
});

process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  stopped,
});
