// One Envoy's ADS stream, as the server sees it: what it asked for, took and refused, the
// generation on its way to it, and whether it still reads.
//
// Backpressure: the server sends a stream one generation at a time (ads-server.ts), so what
// waits for one Envoy is at most one generation. An Envoy reads and answers every push; a
// stream that leaves a push unanswered, or a write unsent (its HTTP/2 window full), with no
// word from the peer for `stallMs` is reset, which lets go of what it holds, and Envoy opens a
// new one and gets the whole current state. The clusters of a generation are not counted
// while Envoy may still be warming them (ads-server.ts waits 30 s for those, then sends the
// rest; from then on they count).
import * as grpc from '@grpc/grpc-js';
import { TYPE_CLUSTER } from '../envoy/envoy-names.js';
import type { Json } from '../json.js';
import { epochMs } from '../pipeline/load-times.js';
import { DeltaState } from './ads-delta.js';
import { type Whole, isWhole } from './ads-delta-step.js';
import type { Resource } from './ads-resource.js';

/** One generation for one kind of Envoy, encoded once: type → resource name → resource. */
export type Encoded = ReadonlyMap<string, ReadonlyMap<string, Resource>>;

/** An Encoded whose types in `later` are made when first read (and kept). */
export class LazyEncoded extends Map<string, ReadonlyMap<string, Resource>> {
  constructor(
    now: Iterable<readonly [string, ReadonlyMap<string, Resource>]>,
    private readonly later: ReadonlyMap<string, () => ReadonlyMap<string, Resource>>,
  ) {
    super(now);
  }

  override get(type: string): ReadonlyMap<string, Resource> | undefined {
    const made = super.get(type);
    if (made) return made;
    const make = this.later.get(type);
    if (!make) return undefined;
    const now = make();
    this.set(type, now);
    return now;
  }
}

/** A request on either protocol: state of the world, or incremental (delta). */
export interface DiscoveryRequest {
  readonly version_info?: string;
  readonly node?: {
    readonly id?: string;
    readonly metadata?: { readonly fields?: Record<string, unknown> };
    readonly user_agent_name?: string;
    readonly user_agent_build_version?: {
      readonly version?: { readonly major_number?: number; readonly minor_number?: number };
    };
  };
  readonly resource_names?: readonly string[];
  readonly type_url?: string;
  readonly response_nonce?: string;
  readonly error_detail?: { readonly code?: number; readonly message?: string };
  // Delta only.
  readonly resource_names_subscribe?: readonly string[];
  readonly resource_names_unsubscribe?: readonly string[];
  readonly initial_resource_versions?: Readonly<Record<string, string>>;
}

/** The generation being delivered to a stream: its clusters first, then the rest, then (delta) a cleanup. */
export interface Flight {
  readonly version: string;
  readonly encoded: Encoded;
  /**
   * Clusters sent; (VHDS) the hosts of route configurations whose head changes sent in their
   * bridge form, the heads to follow; the rest sent; (delta) the clusters only the routes before
   * named, removed.
   */
  step: 'clusters' | 'bridge' | 'rest' | 'cleanup';
  /** While the rest waits for the Envoy's answer on the clusters (or for its asking for virtual hosts). */
  timer: NodeJS.Timeout | undefined;
}

/** A push of one type: its generation, and when it was sent, handed to HTTP/2 and answered (epoch ms). */
export interface PushTimes {
  readonly version: string;
  readonly sentAt: number;
  writtenAt?: number;
  answeredAt?: number;
}

/** RST_STREAM's CANCEL: Envoy treats it as a stream to open again. */
const NGHTTP2_CANCEL = 8;

export class Stream {
  readonly acked = new Map<string, string>();
  readonly nacked = new Map<string, { version: string; message: string }>();
  /** Type → names asked for (RDS, SDS; sorted); the other types are wildcard. */
  readonly names = new Map<string, readonly string[]>();
  /** Type → the last nonce sent, and the version it carried. */
  readonly lastNonce = new Map<string, { nonce: string; version: string }>();
  /** Types whose last push the Envoy has not answered yet. */
  readonly unanswered = new Set<string>();
  /** The clusters the routes this Envoy accepted name (kept until it accepts newer routes). */
  routeClusters: ReadonlyMap<string, Resource> = new Map();
  /** Their endpoints (EDS), kept with them. */
  routeEndpoints: ReadonlyMap<string, Resource> = new Map();
  flight: Flight | undefined;
  /** The last generation fully delivered (every push of it answered), and when (epoch ms). */
  delivered: { readonly version: string; readonly at: number } | undefined;
  /** VHDS: its Envoy was waited for once to ask for virtual hosts, and did not (ads-server.ts). */
  hostsWaitOver = false;
  node = '';
  kind = '';
  /** Delta, from an Envoy that takes virtual hosts apart (VHDS): route configurations come without them. */
  vhds = false;
  /** Per type, its last push's times (load-times.ts): what a change's time is made of. */
  readonly pushTimes = new Map<string, PushTimes>();
  /** Bytes of resources sent, for status and tests: what a change costs on the wire. */
  sentBytes = 0;
  sentResources = 0;
  private nonce = 0;
  private unsent = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  closed = false;
  readonly connectedAt = new Date().toISOString();

  /** What the Envoy holds, resource by resource, on a delta stream; undefined on state of the world. */
  readonly delta: DeltaState | undefined;

  constructor(
    readonly call: grpc.ServerDuplexStream<DiscoveryRequest, Json>,
    readonly protocol: 'sotw' | 'delta',
    private readonly stallMs: number,
    private readonly stalled: (s: Stream) => void,
  ) {
    this.delta = protocol === 'delta' ? new DeltaState() : undefined;
  }

  /**
   * Sends `resources` as the whole of `type` (state of the world), or what of them changed
   * (delta: nothing at all when nothing did, and then no answer is waited for; with `removing`,
   * of what the Envoy holds besides, only the names it says are removed). Whether it sent.
   */
  send(
    type: string,
    version: string,
    resources: readonly Resource[] | Whole,
    removing?: (name: string) => boolean,
  ): boolean {
    if (this.closed) return false;
    let message: Json;
    let sent: readonly { readonly value: Buffer }[];
    if (this.delta) {
      // `removing`: these resources, and only those names removed (ads-server.ts's bridge).
      const push =
        removing && !isWhole(resources)
          ? this.delta.add(type, resources, removing)
          : this.delta.push(type, resources);
      if (!push) return false;
      message = { system_version_info: version, type_url: type, ...push };
      sent = push.resources.map((r) => r.resource);
    } else {
      sent = (isWhole(resources) ? [...resources.values()] : resources).map((r) => r.any);
      message = { version_info: version, resources: sent, type_url: type };
    }
    this.nonce++;
    const nonce = String(this.nonce);
    this.lastNonce.set(type, { nonce, version });
    this.unanswered.add(type);
    for (const r of sent) this.sentBytes += r.value.length;
    this.sentResources += sent.length;
    this.unsent++;
    if (!this.stallTimer) this.armStall();
    const times: PushTimes = { version, sentAt: epochMs() };
    this.pushTimes.set(type, times);
    this.call.write({ ...message, nonce }, () => {
      times.writtenAt = epochMs();
      this.wentOut();
    });
    return true;
  }

  /** The Envoy answered the last push of `type` (taken or refused). */
  answered(type: string): void {
    this.unanswered.delete(type);
    const times = this.pushTimes.get(type);
    if (times && times.answeredAt === undefined) times.answeredAt = epochMs();
  }

  /** Writes HTTP/2 has not sent on yet (the peer's window is full). */
  get unread(): boolean {
    return this.unsent > 0;
  }

  /** Stops the timers; the stream is gone or being reset. */
  dispose(): void {
    this.closed = true;
    if (this.flight?.timer) clearTimeout(this.flight.timer);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  /**
   * Resets the HTTP/2 stream: an end with a status would queue behind the data the peer does
   * not read. grpc-js (pinned) keeps the HTTP/2 stream as `stream` on the call it hands the
   * handler; without it the stream ends with UNAVAILABLE once the peer reads again.
   */
  reset(): void {
    this.dispose();
    const inner = (this.call as unknown as { call?: { stream?: { close?: (code: number) => void } } }).call;
    if (typeof inner?.stream?.close === 'function') inner.stream.close(NGHTTP2_CANCEL);
    else this.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'the stream did not read' });
  }

  /** A request from the peer: it reads, the clock starts again. */
  heard(): void {
    this.armStall();
  }

  private wentOut(): void {
    this.unsent = Math.max(0, this.unsent - 1);
    // Progress: the clock starts again for what is still queued.
    this.armStall();
  }

  /** A push waits for the peer's answer (its clusters while it warms them excepted). */
  private awaitingAnswer(): boolean {
    for (const type of this.unanswered) {
      if (!(type === TYPE_CLUSTER && this.flight?.step === 'clusters')) return true;
    }
    return false;
  }

  private armStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    if (this.closed) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (this.closed) return;
      if (this.unsent > 0 || this.awaitingAnswer()) this.stalled(this);
      else if (this.unanswered.size > 0) this.armStall();
    }, this.stallMs);
    this.stallTimer.unref();
  }
}
