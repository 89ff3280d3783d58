// Backends only ever listen on loopback: 127.0.0.0/8, so a test can run several on distinct addresses.
import { isIPv4 } from 'node:net';

export class EndpointError extends Error {
  override readonly name = 'EndpointError';
}

/** Returns the address unchanged if it is an IPv4 address in 127.0.0.0/8, else throws. */
export function loopbackAddress(address: string): string {
  if (!isIPv4(address) || !address.startsWith('127.')) {
    throw new EndpointError(
      `address ${JSON.stringify(address)} is not an IPv4 loopback address (127.0.0.0/8)`,
    );
  }
  return address;
}

/** Returns the port if it is an integer in 0-65535 (0 asks the kernel for a free port), else throws. */
export function listenPort(port: number | string): number {
  const value = typeof port === 'number' ? port : /^[0-9]{1,5}$/.test(port) ? Number(port) : NaN;
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new EndpointError(`port ${JSON.stringify(port)} is not an integer in 0-65535`);
  }
  return value;
}
