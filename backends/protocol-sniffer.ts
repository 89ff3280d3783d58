// One port, two protocols: a connection that opens with the HTTP/2 client preface is h2c with prior
// knowledge, anything else is HTTP/1.1. The bytes read to decide are pushed back before hand-off.
import type { Socket } from 'node:net';

const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export type WireProtocol = 'http1' | 'h2c';

/** Classifies the bytes seen so far, or returns null while they are still a prefix of the preface. */
export function classifyOpening(seen: Buffer): WireProtocol | null {
  const n = Math.min(seen.length, preface.length);
  if (!seen.subarray(0, n).equals(preface.subarray(0, n))) return 'http1';
  return seen.length >= preface.length ? 'h2c' : null;
}

/**
 * Reads the first bytes of a connection, un-reads them, and calls `decided` once with the protocol.
 * A connection that stays silent for `idleMs` is closed.
 */
export function sniffProtocol(
  socket: Socket,
  decided: (protocol: WireProtocol) => void,
  idleMs = 10_000,
): void {
  let seen: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), idleMs);
  timer.unref();
  const onData = (chunk: Buffer): void => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const protocol = classifyOpening(seen);
    if (protocol === null) return;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.pause();
    socket.unshift(seen);
    decided(protocol);
  };
  socket.on('data', onData);
  socket.once('close', () => clearTimeout(timer));
}
