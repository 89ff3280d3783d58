// The benchmark's backend as a process of its own (so it can be pinned, and its CPU read
// from /proc): `node dist/bench/backend-main.js minimal|echo <address>...`. Prints one line,
// `port <n>`, and serves until its stdin closes or it is signalled.
import { startEchoBackend } from '../backends/echo/start-echo-backend.js';
import { startMinimalBackend } from './minimal-backend.js';

const [kind, ...addresses] = process.argv.slice(2);
if ((kind !== 'minimal' && kind !== 'echo') || addresses.length === 0) {
  console.error('usage: backend-main.js minimal|echo <address>...');
  process.exit(2);
}
const backend =
  kind === 'minimal'
    ? await startMinimalBackend(addresses)
    : await startEchoBackend({ address: addresses[0] as string });
console.log(`port ${backend.port}`);
const stop = (): void => void backend.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
