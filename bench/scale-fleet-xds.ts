// The control plane's own account of the fleet, from its admin API's /v1/xds: which generation
// each Envoy took of each type, what is in flight to it, and what it was sent (`sent`), read by
// `bench:scale --fleet` to know when a change reached every Envoy and what it cost on the wire.
import { TYPE_CLUSTER } from '../extproc/src/envoy/envoy-names.js';
import { TYPE_VIRTUAL_HOST } from '../extproc/src/envoy/xds-resources.js';
import type { XdsClientStatus, XdsStatus } from '../extproc/src/xds/ads-server.js';
import type { SentPerChange } from './scale-fleet-row.js';
import { until } from './scale-process.js';

export async function xdsStatus(adminPort: number): Promise<XdsStatus> {
  const r = await fetch(`http://127.0.0.1:${adminPort}/v1/xds`);
  return (await r.json()) as XdsStatus;
}

export async function xdsEnvoys(adminPort: number): Promise<readonly XdsClientStatus[]> {
  return (await xdsStatus(adminPort)).envoys;
}

/** Each Envoy's generation of the clusters (every generation is pushed to every stream, clusters first). */
export type Generations = ReadonlyMap<string, string | undefined>;

export const generations = (envoys: readonly XdsClientStatus[]): Generations =>
  new Map(envoys.map((e) => [e.node, e.acked[TYPE_CLUSTER]]));

/**
 * Waits until `count` Envoys are connected, none has anything in flight or refused, all took
 * the same generation and some virtual hosts, and (given `before`) each a newer generation than
 * it had then. The envoys then. Every client here is a delta one on VHDS, whose generation is
 * in flight until its virtual hosts are answered; one that never asks for them is counted
 * delivered after one wait (`withoutVirtualHosts`, ads-server.ts), which the hosts check keeps out.
 */
export async function xdsDelivered(
  adminPort: number,
  count: number,
  limitMs: number,
  before?: Generations,
): Promise<readonly XdsClientStatus[]> {
  let envoys: readonly XdsClientStatus[] = [];
  await until(`${count} Envoys took the generation`, limitMs, async () => {
    envoys = await xdsEnvoys(adminPort);
    const taken = new Set(envoys.map((e) => e.acked[TYPE_CLUSTER]));
    return (
      envoys.length === count &&
      envoys.every(
        (e) => e.inFlight === undefined && e.nacked.length === 0 && e.acked[TYPE_VIRTUAL_HOST] !== undefined,
      ) &&
      taken.size === 1 &&
      !taken.has(undefined) &&
      (before === undefined || envoys.every((e) => before.get(e.node) !== e.acked[TYPE_CLUSTER]))
    );
  });
  return envoys;
}

/** Per Envoy, what `sent` grew by from `before` to `after`. */
export function sentBetween(
  before: readonly XdsClientStatus[],
  after: readonly XdsClientStatus[],
): Map<string, SentPerChange> {
  const was = new Map(before.map((e) => [e.node, e.sent]));
  return new Map(
    after.map((e) => {
      const b = was.get(e.node) ?? { resources: 0, bytes: 0 };
      return [e.node, { resources: e.sent.resources - b.resources, bytes: e.sent.bytes - b.bytes }];
    }),
  );
}
