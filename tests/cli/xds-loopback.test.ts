// `serve --xds` lets clear text through without a word only on loopback: an IP literal in
// 127.0.0.0/8, ::1, or exactly localhost; a name that merely starts with "127." may resolve anywhere.
import { describe, expect, it } from 'vitest';
import { isLoopbackHostPort } from '../../extproc/src/cli/commands/xds-settings.js';

describe('isLoopbackHostPort', () => {
  it.each(['127.0.0.1:18000', '127.45.3.9:1', 'localhost:18000', '[::1]:18000', '[0:0:0:0:0:0:0:1]:18000'])(
    '%s is loopback',
    (hostPort) => expect(isLoopbackHostPort(hostPort)).toBe(true),
  );

  it.each([
    '127.foo.example.com:18000',
    '127.0.0.1.nip.io:18000',
    'localhost.example.com:18000',
    '128.0.0.1:18000',
    '0.0.0.0:18000',
    '[::]:18000',
    '[::2]:18000',
    '10.0.0.1:18000',
  ])('%s is not loopback', (hostPort) => expect(isLoopbackHostPort(hostPort)).toBe(false));
});
