// The Lease flags: client-go's defaults, durations as 15s / 500ms, and the orders between them
// that keep a holder's last write before another replica may take the Lease.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../extproc/src/cli/args.js';
import { LEASE_FLAGS, leaseSettingsOf } from '../../extproc/src/cli/lease-flags.js';

const settings = (...args: string[]) => leaseSettingsOf(parseArgs(args, LEASE_FLAGS), false);

describe('lease flags', () => {
  it('default to 15 s / 10 s / 2 s on the Lease steadfast-system/steadfast, named by host and pid', () => {
    expect(settings()).toMatchObject({
      name: 'steadfast',
      namespace: 'steadfast-system',
      durationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    expect(settings().identity).toMatch(new RegExp(`_${process.pid}$`));
  });

  it('read durations in s and ms, and the identity given', () => {
    expect(
      settings(
        '--lease-duration',
        '3s',
        '--lease-renew-deadline',
        '2',
        '--lease-retry-period',
        '500ms',
        '--lease-identity',
        'pod-a',
      ),
    ).toMatchObject({ durationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500, identity: 'pod-a' });
  });

  it('refuse a renew deadline not below the duration, a retry period too close to it, and bad values', () => {
    expect(() => settings('--lease-renew-deadline', '15s')).toThrow(/less than --lease-duration/);
    expect(() => settings('--lease-retry-period', '9s')).toThrow(/1\.2 × --lease-retry-period/);
    expect(() =>
      settings('--lease-duration', '2500ms', '--lease-renew-deadline', '2s', '--lease-retry-period', '1s'),
    ).toThrow(/whole seconds/);
    expect(() => settings('--lease-duration', 'soon')).toThrow(/--lease-duration: "soon" is not a duration/);
    expect(() => settings('--lease-name', 'Not_A_Name')).toThrow(/not a Kubernetes object name/);
  });
});
