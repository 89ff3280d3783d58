// Where one change's time goes (`bench:scale --fleet`): the control plane's own timestamps for
// the generation the change made (/v1/xds: its load, each kind of Envoy's resources, each
// Envoy's last push; extproc/src/pipeline/load-times.ts), against the moment the benchmark began
// the change and the moment it first saw each real Envoy serve it (polled every 20 ms). All are
// epoch milliseconds taken on one machine, so they compare across the processes.
import { epochMs } from '../extproc/src/pipeline/load-times.js';
import type { XdsStatus } from '../extproc/src/xds/ads-server.js';
import { median } from './round-stats.js';
import { type ChangeCpu, type ChangeGc, cpuLine } from './scale-fleet-cpu.js';

export { epochMs };

/** The stages, in order; per real Envoy the last six, each Envoy's own. */
export const SERVICE_STAGES = [
  ['changed', 'the provider saw the change (a file event, or a watch event from the API server)'],
  // The provider's settle follows, as the row recorded it (stagesTable).
  ['read', 'its read began'],
  ['readDone', 'the files read'],
  ['thread', 'the compiler thread took the request'],
  ['threadDone', 'the compiler thread sent its answer'],
  ['received', 'the answer back on the main thread'],
  ['built', 'the snapshot built (table read, IR ports, resolver)'],
  ['updated', 'the generation handed to the ADS server'],
] as const;

export const ENVOY_STAGES = [
  ['generated', 'its kind of Envoy: resources generated from the IR'],
  ['encoded', 'its kind of Envoy: encoded (but its virtual hosts, made within the first push)'],
  ['sent', 'the last push of the generation sent (written to the stream)'],
  ['written', 'that push handed to HTTP/2 (the write callback)'],
  ['acked', 'its answer (ACK) read by the control plane'],
  ['served', 'the benchmark first saw it serve the change'],
] as const;

export type ServiceStage = (typeof SERVICE_STAGES)[number][0];
export type EnvoyStage = (typeof ENVOY_STAGES)[number][0];

/** One change: each stage in ms after the benchmark began it (per real Envoy: in the fleet's order). */
export interface ChangeStages {
  readonly service: Partial<Record<ServiceStage, number>>;
  readonly envoys: readonly Partial<Record<EnvoyStage, number>>[];
}

/**
 * The stages of the change begun at `at` (epoch ms), from /v1/xds once every Envoy took it, and
 * `servedAt`: when each real Envoy (`nodes`, in order) was first seen serving it.
 */
export function changeStages(
  at: number,
  status: XdsStatus,
  nodes: readonly string[],
  servedAt: readonly number[],
): ChangeStages {
  const g = status.generation;
  const since = (t: number | undefined) => (t === undefined ? undefined : t - at);
  const load = g?.load;
  const service: ChangeStages['service'] = {
    changed: since(load?.changedAt),
    read: since(load?.readAt),
    readDone: since(load?.readDoneAt),
    thread: since(load?.threadAt),
    threadDone: since(load?.threadDoneAt),
    received: since(load?.receivedAt),
    built: since(load?.builtAt),
    updated: since(g?.updatedAt),
  };
  const envoys = nodes.map((node, i) => {
    const e = status.envoys.find((x) => x.node === node);
    const kind = e ? g?.kinds[e.kind] : undefined;
    // The generation's last push to it: on a one-route change, its virtual hosts.
    const last = Object.values(e?.pushes ?? {})
      .filter((p) => p.version === g?.version)
      .sort((a, b) => b.sentAt - a.sentAt)[0];
    return {
      generated: since(kind?.generatedAt),
      encoded: since(kind?.encodedAt),
      sent: since(last?.sentAt),
      written: since(last?.writtenAt),
      acked: since(last?.answeredAt),
      served: since(servedAt[i]),
    };
  });
  return { service, envoys };
}

/** Each stage's median over changes (ms after the change began), and per real Envoy its own. */
export interface StageMedians {
  readonly service: Partial<Record<ServiceStage, number>>;
  readonly envoys: readonly Partial<Record<EnvoyStage, number>>[];
  /** Per real Envoy, the median of its ACK minus its push's write: its own apply. */
  readonly apply: readonly number[];
}

function medianOf<K extends string>(rows: readonly Partial<Record<K, number>>[], keys: readonly K[]) {
  const out: Partial<Record<K, number>> = {};
  for (const k of keys) {
    const xs = rows.map((r) => r[k]).filter((x): x is number => x !== undefined);
    const m = median(xs);
    if (m !== null) out[k] = m;
  }
  return out;
}

export function stageMedians(changes: readonly ChangeStages[]): StageMedians {
  const envoyCount = Math.max(0, ...changes.map((c) => c.envoys.length));
  const envoyKeys = ENVOY_STAGES.map(([k]) => k);
  const envoys = Array.from({ length: envoyCount }, (_, i) =>
    medianOf(
      changes.map((c) => c.envoys[i] ?? {}),
      envoyKeys,
    ),
  );
  const apply = Array.from(
    { length: envoyCount },
    (_, i) =>
      median(
        changes.flatMap((c) => {
          const e = c.envoys[i];
          return e?.acked !== undefined && e.written !== undefined ? [e.acked - e.written] : [];
        }),
      ) ?? Number.NaN,
  );
  return {
    service: medianOf(
      changes.map((c) => c.service),
      SERVICE_STAGES.map(([k]) => k),
    ),
    envoys,
    apply,
  };
}

const ms = (x: number | null | undefined): string =>
  x === undefined || x === null || Number.isNaN(x) ? '–' : `${Math.round(x)}`;

/** What the read waited for: the settle the row was measured with, or that it was not recorded. */
function settleNote(settle: string | undefined): string {
  return settle === undefined
    ? "(after the provider's settle, not recorded with this run)"
    : `(after the provider's settle: ${settle})`;
}

/**
 * A table per row: each stage's median (ms after the change began) for added, edited and
 * deleted; `settle`, the provider's settle the row recorded (FleetRow.settle).
 */
export function stagesTable(
  routes: number,
  byKind: Readonly<Record<'add' | 'edit' | 'delete', StageMedians>>,
  settle?: string,
): string {
  const kinds = ['add', 'edit', 'delete'] as const;
  const lines = [
    `| ${routes.toLocaleString('en')} routes: median ms after the change began | added | edited | deleted |`,
    '|---|---:|---:|---:|',
  ];
  for (const [k, what] of SERVICE_STAGES) {
    const label = k === 'read' ? `${what} ${settleNote(settle)}` : what;
    lines.push(`| ${label} | ${kinds.map((c) => ms(byKind[c].service[k])).join(' | ')} |`);
  }
  const envoys = Math.max(...kinds.map((c) => byKind[c].envoys.length));
  for (let i = 0; i < envoys; i++) {
    for (const [k, what] of ENVOY_STAGES)
      lines.push(
        `| Envoy ${i + 1}: ${what} | ${kinds.map((c) => ms(byKind[c].envoys[i]?.[k])).join(' | ')} |`,
      );
    lines.push(
      `| Envoy ${i + 1}: its own apply (ACK − write) | ${kinds.map((c) => ms(byKind[c].apply[i])).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

/** One of the slowest changes of a kind: its time to live on both Envoys, its stages, each part's CPU and GC. */
export interface SlowChange {
  readonly seconds: number;
  readonly stages: ChangeStages;
  /** Absent in runs before session 19. */
  readonly cpu?: ChangeCpu;
  readonly gc?: ChangeGc;
}

/**
 * The `count` slowest timed changes, slowest first: a p95 decided by a few slow changes shows in
 * which stage they lost their time, which the medians cannot.
 */
export function slowestChanges(
  changes: readonly {
    readonly seconds: number;
    readonly stages?: ChangeStages;
    readonly cpu?: ChangeCpu;
    readonly gc?: ChangeGc;
  }[],
  count = 2,
): SlowChange[] {
  return changes
    .flatMap(({ seconds, stages, cpu, gc }) =>
      stages && !Number.isNaN(seconds)
        ? [{ seconds, stages, ...(cpu ? { cpu } : {}), ...(gc ? { gc } : {}) }]
        : [],
    )
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count);
}

/** One slow change on a line: the service's stages, then each real Envoy's, in ms. */
export function slowChangeLine(kind: string, slow: SlowChange): string {
  const s = slow.stages.service;
  const each = (k: EnvoyStage) => slow.stages.envoys.map((e) => ms(e[k])).join(' / ');
  return (
    `${kind} ${slow.seconds.toFixed(3)} s: read ${ms(s.read)}, thread ${ms(s.thread)}, answer ${ms(s.threadDone)}, ` +
    `built ${ms(s.built)}, written ${each('written')}, acked ${each('acked')}, served ${each('served')} ms` +
    cpuLine(slow.cpu, slow.gc)
  );
}
