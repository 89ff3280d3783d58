// Envoy's reason for refusing a generated configuration, read from what it printed.
import { describe, expect, it } from 'vitest';
import { envoyRefusal } from '../../extproc/src/local/local-gateway.js';

describe('envoyRefusal', () => {
  it("takes Envoy's last refusal line without its log prefix", () => {
    const printed = [
      '[2026-11-23 19:11:47.100][4242][warning][main] [source/server/server.cc:1] something else',
      '[2026-11-23 19:11:47.200][4242][warning][config] [source/extensions/config_subscription/filesystem/filesystem_subscription_impl.cc:141] Filesystem config update rejected: invalid repetition size: {2000}',
      '',
    ].join('\n');
    expect(envoyRefusal(printed)).toBe('Filesystem config update rejected: invalid repetition size: {2000}');
  });

  it('finds nothing in a log without a refusal', () => {
    expect(envoyRefusal('[2026-11-23][1][info][main] [x.cc:1] starting\n')).toBeUndefined();
  });
});
