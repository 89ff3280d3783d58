// The Lease flags of `serve` and `dev` with a cluster: which Lease the replicas elect their
// status writer with, its timings (client-go's defaults) and this replica's identity.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { LeaseSettings } from '../provider/kubernetes/lease.js';
import { type FlagSpecs, type ParsedArgs, flag } from './args.js';
import { UsageError } from './command.js';
import { durationMs } from './duration-flag.js';

/** Where a pod finds its own namespace. */
const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export const LEASE_FLAGS: FlagSpecs = {
  'lease-name': {
    type: 'string',
    value: 'NAME',
    description: 'with a cluster: the coordination.k8s.io Lease whose holder alone writes status',
    default: 'steadfast',
  },
  'lease-namespace': {
    type: 'string',
    value: 'NAMESPACE',
    description: "the Lease's namespace",
    default: "the pod's own with --in-cluster, else steadfast-system",
  },
  'lease-identity': {
    type: 'string',
    value: 'ID',
    description: 'this replica as the Lease names its holder',
    default: 'HOSTNAME_PID (in a pod, its name)',
  },
  'lease-duration': {
    type: 'string',
    value: 'DURATION',
    description:
      'how long the other replicas wait for a Lease nobody renews before one takes it (whole seconds)',
    default: '15s',
  },
  'lease-renew-deadline': {
    type: 'string',
    value: 'DURATION',
    description:
      'how long the holder tries to renew before it stops writing status (less than --lease-duration)',
    default: '10s',
  },
  'lease-retry-period': {
    type: 'string',
    value: 'DURATION',
    description: 'how often each replica tries to take or renew the Lease',
    default: '2s',
  },
};

function defaultNamespace(inCluster: boolean): string {
  if (!inCluster) return 'steadfast-system';
  try {
    return readFileSync(POD_NAMESPACE_FILE, 'utf8').trim() || 'steadfast-system';
  } catch {
    return 'steadfast-system';
  }
}

/** The Lease the flags name, checked: duration > renew deadline > retry period. */
export function leaseSettingsOf(parsed: ParsedArgs, inCluster: boolean): LeaseSettings {
  const durationMsValue = durationMs(parsed, 'lease-duration', 15_000);
  const renewDeadlineMs = durationMs(parsed, 'lease-renew-deadline', 10_000);
  const retryPeriodMs = durationMs(parsed, 'lease-retry-period', 2_000);
  // The Lease stores its duration in whole seconds.
  if (durationMsValue % 1000 !== 0) throw new UsageError('--lease-duration: whole seconds only');
  if (renewDeadlineMs >= durationMsValue)
    throw new UsageError(
      '--lease-renew-deadline must be less than --lease-duration: the holder stops writing before another replica may start',
    );
  // client-go's rule: the deadline leaves room for a retry with its jitter.
  if (renewDeadlineMs <= 1.2 * retryPeriodMs)
    throw new UsageError('--lease-renew-deadline must be more than 1.2 × --lease-retry-period');
  const name = flag(parsed, 'lease-name') ?? 'steadfast';
  const namespace = flag(parsed, 'lease-namespace') ?? defaultNamespace(inCluster);
  for (const [what, v] of [
    ['--lease-name', name],
    ['--lease-namespace', namespace],
  ] as const) {
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v))
      throw new UsageError(`${what}: "${v}" is not a Kubernetes object name`);
  }
  const identity = flag(parsed, 'lease-identity') ?? `${hostname()}_${process.pid}`;
  if (identity === '') throw new UsageError('--lease-identity: must not be empty');
  return { name, namespace, identity, durationMs: durationMsValue, renewDeadlineMs, retryPeriodMs };
}
